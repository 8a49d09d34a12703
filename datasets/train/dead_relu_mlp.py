"""dead_relu in a ReLU MLP regressor whose hidden biases start at a negative constant.

Mechanism: the hidden Linear biases are initialised to -2 or -3 (a gate-style "start closed"
bias copied onto ReLU layers), while the inputs are standardised and the default weight init
gives pre-activations with a spread of about 0.6. Every pre-activation of the first hidden layer
is then below zero for every input: the first ReLU outputs exactly 0, all units after it are dead
too, no gradient reaches any hidden weight, and only the output bias learns. The loss sits at the
variance of the target for the whole run (a plateau, not a divergence).

ORIGIN: ``net.1``, the first ReLU, whose units are all dead.
Fixed: the same init, data and optimizer with LeakyReLU(0.2) in place of ReLU: the negative side
still passes gradient, the biases recover and the loss falls.
"""

from __future__ import annotations

import itertools
import random

import torch
from torch import nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = (
    "Lu et al. 2019, 'Dying ReLU and Initialization: Theory and Numerical Examples' (a ReLU "
    "network born dead collapses to a constant and does not train) and the dead-ReLU warning in "
    "CS231n's activation-function notes; LeakyReLU is the standard remedy."
)


def _data(seed: int, steps: int, batch: int, d_in: int) -> list:
    g = torch.Generator().manual_seed(80_000 + seed)
    proj = torch.randn(d_in, 4, generator=g) / d_in**0.5
    mix = torch.randn(4, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        z = x @ proj
        y = (torch.tanh(1.5 * z) @ mix / 1.2).unsqueeze(1)
        batches.append((x, y + 0.05 * torch.randn(batch, 1, generator=g)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([2, 3, 4])
    width = rng.choice([32, 64, 128])
    d_in = rng.choice([8, 16, 32])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([200, 250, 300])
    lr = rng.choice([3e-3, 5e-3])
    bias = rng.choice([-2.0, -3.0])

    torch.manual_seed(seed)
    net = nn.Sequential()
    dims = [d_in] + [width] * depth
    for a, b in itertools.pairwise(dims):
        lin = nn.Linear(a, b)  # default (kaiming-uniform, a=sqrt(5)) weights
        nn.init.constant_(lin.bias, bias)
        net.append(lin)
        net.append(nn.LeakyReLU(0.2) if fixed else nn.ReLU())
    net.append(nn.Linear(width, 1))
    model = nn.Sequential()
    model.add_module("net", net)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, d_in),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
