"""dead_relu: a Deep Sets regressor whose per-element network ends in a ReLU with a negative bias.

Mechanism: a Deep Sets model rho(sum_i phi(x_i)) (Zaheer et al. 2017) regresses a set-level
quantity: each set is 32-64 detector hits with 4-8 standardised features, the target is the
(standardised) total energy deposited above threshold, a sum over the set, so sum pooling is the
right choice. phi is Linear-ReLU-Linear-ReLU, rho is Linear-ReLU-Linear with its output layer
zero-initialised (in both runs) so the first predictions are 0. Worried that the pooled sum
grows with the set size, the author initialises the bias of phi's last Linear to a negative
constant (-2 to -3) "so that each element contributes a sparse feature vector". The
pre-activations of that layer have a spread of about 0.25 around 0 (the largest, over thousands
of elements, under 2), so with the bias they are negative for every element of every set: phi's
output ReLU (``phi.3``) returns exactly 0, the pooled sum is 0 for every set, rho's first layer
sees a constant, and no gradient passes the dead ReLU back into phi (nor reaches rho's
first-layer weights). Only the biases of rho learn, which gives the mean target: the MSE sits at
the target variance (about 1) for the whole run, a plateau, not a divergence. Seeds change the
width, set size, feature count, batch, optimizer (Adam or SGD with momentum), lr and the bias
constant.

ORIGIN: ``phi.3``, the ReLU at the end of the per-element network, whose units are all dead
(``phi.1`` before it stays alive).
Fixed: the same model, data and optimizer with that bias left at PyTorch's default init.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "dead_relu"
ORIGIN = "phi.3"
SOURCE = (
    "Zaheer et al. 2017 (Deep Sets: rho(sum_i phi(x_i))) and Lu et al. 2019 ('Dying ReLU "
    "and Initialization'); forum threads on Deep Sets / PointNet models whose pooled features "
    "are all zero and whose loss stays at the mean-prediction level after a negative-bias "
    "'sparsity' init of the per-element network."
)


class DeepSets(nn.Module):
    def __init__(self, features: int, width: int) -> None:
        super().__init__()
        self.phi = nn.Sequential(
            nn.Linear(features, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU()
        )
        self.rho = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rho(self.phi(x).sum(dim=1))


def _data(seed: int, steps: int, batch: int, size: int, features: int) -> list:
    """Each set is a sample of detector hits (position, energy-like features); the target is the
    total energy deposited above a threshold, standardised: a sum over the set."""
    g = torch.Generator().manual_seed(350_000 + seed)
    w = torch.randn(features, generator=g)
    raw_x, raw_y = [], []
    for _ in range(steps):
        x = torch.randn(batch, size, features, generator=g)
        e = torch.relu(x @ w)
        raw_x.append(x)
        raw_y.append(e.sum(dim=1, keepdim=True))
    ys = torch.cat(raw_y)
    mu, sd = ys.mean(), ys.std()
    return [(x, (y - mu) / sd) for x, y in zip(raw_x, raw_y, strict=True)]


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    features = rng.choice([4, 6, 8])
    width = rng.choice([32, 48, 64])
    size = rng.choice([32, 48, 64])
    batch = rng.choice([32, 64])
    steps = rng.choice([120, 150, 180])
    use_adam = rng.random() < 0.5
    lr = rng.choice([1e-3, 3e-3]) if use_adam else rng.choice([0.001, 0.002])
    offset = rng.choice([2.0, 2.5, 3.0])  # the per-element "sparsity" bias

    torch.manual_seed(seed)
    model = DeepSets(features, width)
    nn.init.zeros_(model.rho[2].weight)  # output layer zero-initialised: predictions start at 0
    if not fixed:  # phi's output bias set negative so the pooled sum "does not grow with N"
        nn.init.constant_(model.phi[2].bias, -offset)
    if use_adam:
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, size, features),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
