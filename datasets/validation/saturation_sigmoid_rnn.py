"""saturation of the sigmoid update gate of a gated RNN (sequence classification, SGD).

Mechanism: a minimal gated recurrent cell (a GRU without reset gate),

    z_t = sigmoid(W_z [x_t, h_{t-1}] + b_z),
    h_t = z_t * h_{t-1} + (1 - z_t) * tanh(W_n [x_t, h_{t-1}]),

whose update-gate biases get the "chrono" initialisation b_z = log(U(1, T_max - 1)) (Tallec &
Ollivier 2018) with T_max set far beyond the sequence length (1e5-1e7 for 8-12 steps, e.g. a value
copied from a long-sequence config). Nearly every gate pre-activation is then +7 to +16, the
sigmoid sits in its flat upper tail (z ~ 0.999-0.9999999), the state hardly moves from h_0 = 0 and
both the input's path into h and the gradient back to every weight carry a factor 1 - z ~
sigmoid'(a) ~ 0. The zero-initialised head sees a near-constant, near-zero state, so the
cross-entropy loss stays at about log(classes): a plateau, not a divergence.

The optimizer is SGD with momentum: Adam's per-parameter normalisation magnifies the vanishing
gradients and can climb partly out of the tail. Large recurrent or input weights on a plain sigmoid
RNN were tried first and do not make a label: the units saturate, but their near-binary state still
carries the input and the run learns; the saturated gate is what stalls an RNN.

ORIGIN: ``gate_act``, the update gate's Sigmoid, the first saturating module called in each step
and the one that saturates (the candidate's Tanh stays in range).
Fixed: the same weights, biases, data and optimizer with a LayerNorm on the gate pre-activation
before the sigmoid: it removes the common offset, the gates open to mid range, the state follows
the input and the loss falls.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "gate_act"
SOURCE = (
    "Bengio, Simard & Frasconi 1994 and Pascanu et al. 2013 on vanishing gradients through "
    "saturated recurrent units; the gate-bias initialisations of Jozefowicz et al. 2015 and "
    "Tallec & Ollivier 2018 (chrono init, b = log(U(1, T_max - 1))) with T_max far too large; "
    "Ba et al. 2016 (Layer Normalization) for the normalised-gate fix."
)


class GatedRNN(nn.Module):
    """A minimal gated RNN with explicit modules, so each part is a separately named unit."""

    def __init__(self, d_in: int, hidden: int, classes: int, norm: bool) -> None:
        super().__init__()
        self.gate = nn.Linear(d_in + hidden, hidden)
        self.gate_norm = nn.LayerNorm(hidden) if norm else None
        self.gate_act = nn.Sigmoid()
        self.cand = nn.Linear(d_in + hidden, hidden)
        self.cand_act = nn.Tanh()
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.new_zeros(x.shape[0], self.head.in_features)
        for t in range(x.shape[1]):
            xh = torch.cat([x[:, t], h], dim=1)
            a = self.gate(xh)
            if self.gate_norm is not None:
                a = self.gate_norm(a)
            z = self.gate_act(a)
            n = self.cand_act(self.cand(xh))
            h = z * h + (1.0 - z) * n
        return self.head(h)


def _data(seed: int, steps: int, batch: int, seq_len: int, d_in: int, classes: int) -> list:
    """The class is signalled by a prototype vector added at random time steps, in noise."""
    g = torch.Generator().manual_seed(130_000 + seed)
    protos = torch.randn(classes, d_in, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        x = 0.7 * torch.randn(batch, seq_len, d_in, generator=g)
        mask = (torch.rand(batch, seq_len, 1, generator=g) < 0.5).float()
        batches.append((x + mask * protos[y].unsqueeze(1), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    hidden = rng.choice([24, 32, 48])
    seq_len = rng.choice([8, 10, 12])
    d_in = rng.choice([6, 8, 12])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([120, 150, 180])
    t_max = rng.choice([1e5, 1e6, 1e7])
    lr = rng.choice([0.05, 0.1, 0.2])
    momentum = rng.choice([0.8, 0.9])

    torch.manual_seed(seed)
    model = GatedRNN(d_in, hidden, classes, norm=fixed)
    gen = torch.Generator().manual_seed(140_000 + seed)
    with torch.no_grad():
        # Chrono init of the update-gate bias, with a T_max meant for far longer sequences.
        u = 1.0 + (t_max - 2.0) * torch.rand(hidden, generator=gen)
        model.gate.bias.copy_(torch.log(u))
        nn.init.zeros_(model.head.weight)  # zero-initialised head: the run starts at log(classes)
        nn.init.zeros_(model.head.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, seq_len, d_in, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
