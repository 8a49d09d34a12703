"""unsafe_op: torch.log of a ReLU output in a learnable log-filterbank front end (spectrum
classification, SGD with momentum or Adam, cross-entropy).

Mechanism: an audio/vibration classifier reads power spectra (non-negative, spanning decades)
through a learnable filterbank ``frontend``: the filters start as positive, mel-like triangles
(plus a small floor), the filter energies are passed through a ReLU "to keep them non-negative"
and compressed with ``torch.log`` (log-mel style), then an MLP classifies them. The filter
weights are free parameters, so training can make some of them negative. The run is calm at
first; but the cross-entropy rewards pushing some filter energy towards zero for some class
(log s -> -inf is an unbounded margin) and the gradient of log(s) is 1/s, so the steps on that
filter grow as s shrinks: at a seed-dependent step (~30-130) an update overshoots and the filter
energy of some sample crosses zero. The ReLU returns exactly 0 and ``torch.log(0)`` is -inf: the
first non-finite value of the run is born in ``frontend``'s output; the next Linear turns it into
+-inf hidden units, the output layer into inf - inf = NaN logits, and the loss is NaN.

ORIGIN: ``frontend``, the module that computes log(relu(.)).
Fixed: the same run with the safe form ``torch.log(relu(s) + 1e-6)`` (the epsilon every log-mel
front end adds), so an energy at zero gives a finite floor instead of -inf.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "frontend"
SOURCE = (
    "torchaudio / librosa log-mel practice (log(mel + 1e-6), amplitude_to_DB with a floor) and "
    "PyTorch forum threads on learnable filterbanks / 'torch.log gives -inf, loss becomes nan' "
    "when a ReLU output reaches exactly 0; fixed by adding an epsilon or clamping."
)


class LogFilterbank(nn.Module):
    """Learnable filterbank: log(relu(spec @ W.T)) (+ eps in the safe form)."""

    def __init__(self, bins: int, filters: int, eps: float | None) -> None:
        super().__init__()
        centers = torch.linspace(0, bins - 1, filters + 2)
        idx = torch.arange(bins, dtype=torch.float32)
        w = torch.zeros(filters, bins)
        for f in range(filters):
            lo, c, hi = centers[f], centers[f + 1], centers[f + 2]
            up = (idx - lo) / (c - lo)
            down = (hi - idx) / (hi - c)
            w[f] = torch.clamp(torch.minimum(up, down), min=0.0) + 0.1  # + a small floor
        self.weight = nn.Parameter(w)
        self.eps = eps

    def forward(self, spec: torch.Tensor) -> torch.Tensor:
        energy = torch.relu(spec @ self.weight.t())
        if self.eps is not None:
            return torch.log(energy + self.eps)
        return torch.log(energy)


class SpectrumClassifier(nn.Module):
    def __init__(self, bins: int, filters: int, hidden: int, classes: int,
                 eps: float | None) -> None:
        super().__init__()
        self.frontend = LogFilterbank(bins, filters, eps)
        self.mlp = nn.Sequential(nn.Linear(filters, hidden), nn.ReLU(),
                                 nn.Linear(hidden, classes))

    def forward(self, spec: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.frontend(spec))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    bins = rng.choice([32, 48, 64])
    filters = rng.choice([8, 12, 16])
    hidden = rng.choice([32, 64])
    classes = rng.choice([3, 4, 6])
    batch = rng.choice([32, 64])
    steps = rng.choice([200, 250, 300])
    optim = rng.choice(["sgd", "adam"])
    lr = rng.choice([0.005, 0.01, 0.02]) if optim == "sgd" else rng.choice([1e-3, 2e-3, 3e-3])

    g = torch.Generator().manual_seed(91_000 + seed)
    idx = torch.arange(bins, dtype=torch.float32)
    # Each class: a few spectral peaks on a 1/f-like floor; gains span two decades.
    peaks = torch.randint(2, bins - 2, (classes, 3), generator=g).float()
    envelopes = 0.5 / (1.0 + idx / 8.0)
    envelopes = envelopes + sum(torch.exp(-((idx - peaks[:, k:k + 1]) ** 2) / 4.0)
                                for k in range(3))
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        gain = torch.exp(2.3 * torch.rand(batch, 1, generator=g) - 1.15)
        jitter = torch.exp(0.8 * torch.randn(batch, bins, generator=g))
        batches.append((gain * envelopes[y] * jitter, y))

    torch.manual_seed(seed)
    model = SpectrumClassifier(bins, filters, hidden, classes, 1e-6 if fixed else None)
    if optim == "sgd":
        opt: torch.optim.Optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
