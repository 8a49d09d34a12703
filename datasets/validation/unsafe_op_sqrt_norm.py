"""unsafe_op: a hand-written batch normalisation without epsilon in a tabular MLP regressor.

Mechanism: the model standardises its inputs and hidden features with a hand-written batch norm,
``(x - mean) / sqrt(var)`` over the batch, with no epsilon (the fastai-style tabular recipe of a
BatchNorm on the continuous inputs, written "from scratch"). Training is calm as long as every
feature varies within every batch. It breaks at the first batch in which some feature has zero
variance: the last, one-row batch of an epoch (the dataset size leaves a remainder of one and
the loader keeps it), or a normal batch in which a rare 0/1 flag feature happens to be 0 for
every row. There ``x - mean`` is exactly 0 and ``sqrt(var)`` is exactly 0, so the norm outputs
0/0 = NaN on finite, ordinary inputs and the loss is NaN. Which trigger comes first, and at
which step, depends on the seed (dataset size, batch size, flag rate).

ORIGIN: ``norm_in``, the input norm, the first module to divide by a zero standard deviation
(the hidden norms would do the same on the one-row batch, later in the forward pass).
Fixed: the same norm with ``sqrt(var + 1e-5)``, as in ``nn.BatchNorm1d``; a zero-variance
feature then maps to 0 and training goes on.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "norm_in"
SOURCE = (
    "'BatchNorm from scratch' without eps giving NaN on a batch of size 1 or a constant feature "
    "(PyTorch forum threads on NaN after the last batch of an epoch; nn.BatchNorm1d's 'Expected "
    "more than 1 value per channel when training' guard and its eps=1e-5 exist for this)."
)


class BatchStandardize(nn.Module):
    """Hand-written batch norm over dim 0 with an affine transform."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=0)
        var = ((x - mean) ** 2).mean(dim=0)
        std = torch.sqrt(var + self.eps) if self.eps else torch.sqrt(var)
        return (x - mean) / std * self.weight + self.bias


class TabularNet(nn.Module):
    def __init__(self, d_in: int, width: int, depth: int, eps: float) -> None:
        super().__init__()
        self.norm_in = BatchStandardize(d_in, eps)
        layers: list[nn.Module] = []
        dims = [d_in] + [width] * depth
        for i in range(depth):
            layers += [nn.Linear(dims[i], dims[i + 1]), nn.ReLU(), BatchStandardize(width, eps)]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(self.norm_in(x)))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([1, 2, 3])
    width = rng.choice([32, 64, 128])
    d_cont = rng.choice([6, 10, 14])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([1e-3, 2e-3, 3e-3])
    # Batches per epoch: the one-row remainder batch comes right after them.
    per_epoch = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    # Rare flag: P(flag is 0 for a whole batch) is about exp(-c).
    flag_rate = rng.choice([4.0, 5.0, 6.0]) / batch

    g = torch.Generator().manual_seed(170_000 + seed)
    n = per_epoch * batch + 1
    cont = torch.randn(n, d_cont, generator=g) * torch.exp(torch.randn(d_cont, generator=g))
    cont = cont + 3.0 * torch.randn(d_cont, generator=g)  # raw, unstandardised columns
    flag = (torch.rand(n, 1, generator=g) < flag_rate).float()
    x_all = torch.cat([cont, flag], dim=1)
    z = (cont - cont.mean(0)) / cont.std(0)
    w = torch.randn(d_cont, generator=g) / math.sqrt(d_cont)
    y_all = z @ w + 0.5 * torch.tanh(z[:, 0] * z[:, 1]) + 1.5 * flag[:, 0]
    y_all = (y_all + 0.1 * torch.randn(n, generator=g)).unsqueeze(1)
    batches: list[tuple[torch.Tensor, torch.Tensor]] = []
    while len(batches) < steps:  # epochs of shuffled batches, the last one of size 1
        perm = torch.randperm(n, generator=g)
        for i in range(0, n, batch):
            idx = perm[i : i + batch]
            batches.append((x_all[idx], y_all[idx]))
    batches = batches[:steps]

    torch.manual_seed(seed)
    model = TabularNet(d_cont + 1, width, depth, eps=1e-5 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
