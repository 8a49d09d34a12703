"""bad_init: a deep tanh MLP whose weights start far too small (regression, SGD + momentum).

Mechanism: every Linear weight is drawn from N(0, std^2) with a fixed std of 1e-3 to 1e-2 (the
"gaussian, std 0.01" recipe of early convnet configs, applied to a deep stack; biases zero).
Each layer multiplies the activation scale by about std * sqrt(fan_in) (0.01-0.1 here) and tanh
is linear near 0, so after 8-12 layers the signal that reaches the head is 1e-8 or smaller: the
output does not depend on the input. The backward pass shrinks by the same factor per layer, so
every weight gradient (input activation times back-propagated error, one of the two vanishingly
small) is negligible and SGD cannot grow the weights back. The loss sits at the variance of the
target from step 0: a plateau.

The tanh units are not saturated (|h| ~ 0, tanh' ~ 1): unlike saturation, the scale shrinks
geometrically with depth rather than pinning at +-1.

ORIGIN: ``net.0``, the first Linear, where the geometric shrinkage starts.
Fixed: the same architecture, data and optimizer with xavier_normal_ weights (tanh gain 5/3)
and zero biases.
"""

from __future__ import annotations

import itertools
import random

import torch
from torch import nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = (
    "Simonyan & Zisserman 2014 (VGG, sec. 3.1: 'bad initialisation can stall learning due to "
    "the instability of gradient in deep nets'; only the shallowest net was trained from "
    "N(0, 10^-2) weights), "
    "Glorot & Bengio 2010 on activation variance shrinking with depth, and the forum pattern "
    "'deep network outputs a constant / loss does not decrease' after init.normal_(w, std=0.01)."
)


def _data(seed: int, steps: int, batch: int, d_in: int) -> list:
    g = torch.Generator().manual_seed(180_000 + seed)
    proj = torch.randn(d_in, 4, generator=g) / d_in**0.5
    mix = torch.randn(4, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        z = x @ proj
        y = (torch.tanh(z) @ mix / 1.2 + 0.3 * z[:, 0]).unsqueeze(1)
        batches.append((x, y + 0.05 * torch.randn(batch, 1, generator=g)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([8, 10, 12])
    width = rng.choice([32, 64, 128])
    d_in = rng.choice([8, 16, 24])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([150, 200, 250])
    std = rng.choice([1e-3, 3e-3, 1e-2])
    lr = rng.choice([0.01, 0.02])

    torch.manual_seed(seed)
    net = nn.Sequential()
    dims = [d_in] + [width] * depth
    for a, b in itertools.pairwise(dims):
        net.append(nn.Linear(a, b))
        net.append(nn.Tanh())
    net.append(nn.Linear(width, 1))
    gen = torch.Generator().manual_seed(190_000 + seed)
    for lin in net:
        if not isinstance(lin, nn.Linear):
            continue
        with torch.no_grad():
            if fixed:
                gain = nn.init.calculate_gain("tanh")
                std_l = gain * (2.0 / (lin.in_features + lin.out_features)) ** 0.5
            else:
                std_l = std
            lin.weight.copy_(torch.randn(lin.weight.shape, generator=gen) * std_l)
            lin.bias.zero_()
    model = nn.Sequential()
    model.add_module("net", net)
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
