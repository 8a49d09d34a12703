"""bad_init on a deep ReLU MLP (regression, SGD with momentum).

Mechanism: every Linear weight is drawn from N(0, std^2) with std 0.5-1.0, independent of fan-in
(``nn.init.normal_(w, 0, 1)`` is a common slip). Each ReLU layer then multiplies the activation
scale by about std * sqrt(fan_in / 2) (3-7x here), so the output is 1e4-1e9 times too large at
step 0, the MSE loss and the gradients are astronomically large and the first SGD updates send the
weights to inf/NaN within a few steps.

ORIGIN: ``net.0``, the first Linear, where the geometric growth starts.
Fixed: the same architecture, data and optimizer with kaiming_normal_ (ReLU gain) weights and zero
biases.
"""

from __future__ import annotations

import itertools
import random

import torch
from torch import nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = (
    "He et al. 2015 (Delving Deep into Rectifiers, sec. 2.2) and the PyTorch forum pattern 'deep "
    "MLP loss is inf/NaN from the first iteration' after initialising weights with "
    "normal_(0, 1): activation variance grows geometrically with depth; kaiming init fixes it."
)


def _data(seed: int, steps: int, batch: int, d_in: int) -> list:
    g = torch.Generator().manual_seed(20_000 + seed)
    proj = torch.randn(d_in, 4, generator=g) / d_in**0.5
    mix = torch.randn(4, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        z = x @ proj
        y = (torch.tanh(1.5 * z) @ mix + 0.3 * z[:, 0] * z[:, 1]).unsqueeze(1)
        y = y + 0.05 * torch.randn(batch, 1, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([6, 7, 8, 10])
    width = rng.choice([32, 48, 64, 96])
    d_in = rng.choice([8, 12, 16])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([0.005, 0.01])
    std = rng.choice([0.02, 0.5, 0.7, 1.0])

    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    dims = [d_in] + [width] * (depth - 1)
    for a, b in itertools.pairwise(dims):
        layers += [nn.Linear(a, b), nn.ReLU()]
    layers.append(nn.Linear(width, 1))
    model = nn.Sequential()
    for i, layer in enumerate(layers):
        model.add_module(str(i), layer)
    net = nn.Sequential()
    net.add_module("net", model)
    linears = [m for m in model if isinstance(m, nn.Linear)]
    gen = torch.Generator().manual_seed(30_000 + seed)
    for lin in linears:
        std_l = (2.0 / lin.in_features) ** 0.5 if fixed else std
        with torch.no_grad():
            lin.weight.copy_(torch.randn(lin.weight.shape, generator=gen) * std_l)
            lin.bias.zero_()
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    return {
        "model": net,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, d_in),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
