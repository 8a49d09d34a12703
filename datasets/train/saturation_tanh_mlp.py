"""saturation in a deep tanh MLP (regression).

Mechanism: the Linear weights are drawn with a fixed std of 1.5-2.0 (no 1/sqrt(fan_in)
scaling), so every pre-activation has a spread of roughly 6-20 (far beyond tanh's linear range
of about +-1): from step 0 nearly all tanh units sit at +-1, tanh'(a) ~ 0, and the gradient
reaching the lower layers vanishes (or, in the chaotic regime, is large and useless). What
reaches the zero-initialised head is a near-random sign pattern of the input, so the loss hardly
moves: it plateaus at the variance of the target, or wanders above it.

The activations stay bounded (|h| <= 1): unlike the bad_init scenario (ReLU, the same slip, the
activation scale grows geometrically with depth), the scale here is flat with depth and the units
are pinned at the tanh limits.

ORIGIN: ``net.1``, the first Tanh, the first activation that saturates.
Fixed: the same weights, data and optimizer with a LayerNorm before every Tanh (pre-activations
back to unit scale), which removes the saturation.
"""

from __future__ import annotations

import itertools
import random

import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = (
    "CS231n 'Neural Networks Part 2' (weight initialization: 'if the initial weights are too "
    "large then most neurons would become saturated and the network will barely learn') and "
    "LeCun et al. 1998, Efficient BackProp, on sigmoid/tanh saturation stalling learning."
)


def _data(seed: int, steps: int, batch: int, d_in: int) -> list:
    g = torch.Generator().manual_seed(70_000 + seed)
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
    depth = rng.choice([10, 12, 14])
    width = rng.choice([32, 64, 128])
    d_in = rng.choice([16, 24, 32])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([200, 250, 300])
    std = rng.choice([1.5, 2.0])
    optim = rng.choice(["adam", "sgd"])
    lr = rng.choice([1e-3, 3e-3]) if optim == "adam" else rng.choice([0.01, 0.02])

    torch.manual_seed(seed)
    net = nn.Sequential()
    dims = [d_in] + [width] * depth
    for a, b in itertools.pairwise(dims):
        lin = nn.Linear(a, b)
        nn.init.normal_(lin.weight, 0.0, std)
        nn.init.zeros_(lin.bias)
        net.append(lin)
        if fixed:
            net.append(nn.LayerNorm(b))
        net.append(nn.Tanh())
    head = nn.Linear(width, 1)
    nn.init.zeros_(head.weight)  # zero-initialised regression head: the run starts at var(y)
    nn.init.zeros_(head.bias)
    net.append(head)
    model = nn.Sequential()
    model.add_module("net", net)
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, d_in),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
