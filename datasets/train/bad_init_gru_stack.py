"""bad_init: a stack of GRU layers initialised far too small, so the signal vanishes with depth.

Mechanism: a sequence classifier made of three or four single-layer ``nn.GRU`` modules stacked
in depth, then a linear head on the last hidden state, trained with SGD + momentum (or Nesterov)
at lr 0.3-0.5 and a binary cross-entropy. Every GRU weight matrix is drawn from N(0, std) with
std 1e-3-3e-3 and the biases are zeroed (a "small init for stability" copied from a linear
model; PyTorch's default is U(-1/sqrt(H), 1/sqrt(H)), ~0.2 here). With weights that small both
gates sit at sigmoid(0) = 0.5 and the candidate state is ~W x, so each GRU passes on about
std * sqrt(fan_in) ~ 1e-2 of its input's variation: the input-dependent part of the hidden
state shrinks geometrically with depth (about 3e-3, 3e-5, 3e-7, 4e-9 over the layers; ~0.1 to
~1e-2 with the default init) from step 0. The head sees a vanishing signal, and the gradient
that reaches the GRU weights is multiplied by the same tiny factors, so they never grow out of
the hole within the run: the loss sits at ln(2) and stalls.

ORIGIN: ``layers.0``, the first GRU, where the geometric shrink starts (the input itself has
unit scale).
Fixed: the same data, depth, optimizer and learning rate with PyTorch's default GRU init.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = (
    "Glorot & Bengio 2010, 'Understanding the difficulty of training deep feedforward neural "
    "networks' (activations and gradients vanish with depth when the init is too small) and "
    "PyTorch forum threads on stacked GRU/LSTMs whose loss never moves from ln(2) after a custom "
    "normal_(0, 0.001) init."
)


class GRUStack(nn.Module):
    def __init__(self, d_in: int, hidden: int, depth: int) -> None:
        super().__init__()
        dims = [d_in] + [hidden] * depth
        self.layers = nn.ModuleList(
            nn.GRU(dims[i], hidden, batch_first=True) for i in range(depth))
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for gru in self.layers:
            x, _ = gru(x)
        return self.head(x[:, -1]).squeeze(1)


def _data(seed: int, steps: int, batch: int, length: int, d_in: int) -> list:
    """Label: the sign of a hidden linear read-out summed over the last three time steps."""
    g = torch.Generator().manual_seed(330_000 + seed)
    w = torch.randn(d_in, generator=g) / d_in**0.5
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, length, d_in, generator=g)
        s = (x @ w)[:, -3:].sum(1)
        y = (s > 0).float()
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([3, 4])
    hidden = rng.choice([16, 24, 32])
    d_in = rng.choice([3, 4, 6])
    length = rng.choice([8, 10, 12])
    batch = rng.choice([32, 64])
    steps = rng.choice([150, 200])
    std = rng.choice([1e-3, 3e-3])
    lr = rng.choice([0.3, 0.5])
    nesterov = rng.choice([True, False])

    batches = _data(seed, steps, batch, length, d_in)
    torch.manual_seed(seed)
    model = GRUStack(d_in, hidden, depth)
    if not fixed:
        with torch.no_grad():
            for name, p in model.layers.named_parameters():
                if "weight" in name:
                    p.normal_(0.0, std)
                else:
                    p.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=nesterov)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.BCEWithLogitsLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
