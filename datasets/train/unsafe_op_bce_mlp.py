"""unsafe_op: a hand-written binary cross-entropy (log of a sigmoid) in an MLP classifier.

Mechanism: the model's head turns logits into log-probabilities with ``torch.log(sigmoid(z))``
and ``torch.log(1 - sigmoid(z))`` instead of ``F.logsigmoid``/``BCEWithLogitsLoss``. Training is
calm and the classifier grows confident; once any logit passes ~16.6, ``sigmoid(z)`` rounds to
exactly 1.0 in float32, ``log(1 - p)`` is ``-inf`` and the loss ``-(1 - y) * log(1 - p)`` is
``0 * -inf = NaN`` (or ``inf`` for a confidently wrong example). The step depends on the lr and
the margin of the data, which change with the seed.

ORIGIN: ``head``, the module whose ``log`` produces the first non-finite value (forward-born, on
finite inputs).
Fixed: the same head with the probabilities clamped to [1e-7, 1 - 1e-7] before the log.
"""

from __future__ import annotations

import itertools
import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "head"
SOURCE = (
    "The classic 'manual BCE gives NaN' bug (PyTorch forum and Stack Overflow: "
    "-(y*log(sigmoid(z)) + (1-y)*log(1-sigmoid(z))) turns NaN once sigmoid saturates to 1.0); "
    "PyTorch's BCELoss clamps log outputs to >= -100 and BCEWithLogitsLoss exists for this."
)


class BernoulliLogProbs(nn.Module):
    """Returns [log p, log(1 - p)] for p = sigmoid(z)."""

    def __init__(self, eps: float = 0.0) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        p = torch.sigmoid(z)
        if self.eps:
            p = p.clamp(self.eps, 1.0 - self.eps)
        return torch.cat([torch.log(p), torch.log(1.0 - p)], dim=1)


class Classifier(nn.Module):
    def __init__(self, d_in: int, width: int, depth: int, eps: float) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        dims = [d_in] + [width] * depth
        for a, b in itertools.pairwise(dims):
            layers += [nn.Linear(a, b), nn.ReLU()]
        layers.append(nn.Linear(width, 1))
        self.body = nn.Sequential(*layers)
        self.head = BernoulliLogProbs(eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def nll(logprobs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return -(y * logprobs[:, 0] + (1.0 - y) * logprobs[:, 1]).mean()


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([1, 2, 3])
    width = rng.choice([32, 64, 128])
    d_in = rng.choice([8, 16, 32])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([250, 300, 400])
    lr = rng.choice([3e-3, 5e-3, 1e-2])
    margin = rng.choice([0.5, 1.0, 1.5])

    g = torch.Generator().manual_seed(50_000 + seed)
    w_true = torch.randn(d_in, generator=g)
    w_true = w_true / w_true.norm()
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        y = (x @ w_true > 0).float()
        x = x + margin * (2.0 * y - 1.0).unsqueeze(1) * w_true  # push the classes apart
        batches.append((x, y))

    torch.manual_seed(seed)
    model = Classifier(d_in, width, depth, eps=1e-7 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nll,
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
