"""lr_too_high on a small CNN regressor trained with SGD + momentum.

Mechanism: the same CNN (LeakyReLU(0.2), DCGAN-style, so units cannot die and hide the
divergence), data and schedule as a healthy run, but the learning rate (0.7-1.4) is 15-40x the
one that trains well. Some seeds warm the lr up linearly over 20-60 steps, others start at the
peak. Once the lr is past the stability edge the updates overshoot, the weights and outputs grow
with every step and the MSE loss goes to inf/NaN after a seed-dependent number of steps.

ORIGIN is None: the cause is the optimizer's configuration, shared by every layer, not a module.
Fixed: the same run at the sane learning rate.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "The 'loss becomes NaN after a few iterations' pattern of CS231n's babysitting notes and many "
    "PyTorch forum threads: an SGD learning rate one to two orders of magnitude too high makes "
    "the loss explode; lowering the lr fixes it."
)


def _data(seed: int, steps: int, batch: int, size: int, outputs: int) -> list:
    """Images made of a few smooth random patterns; targets are their (standardised) mixing
    coefficients, so the task is a well-posed regression that a small CNN learns quickly."""
    g = torch.Generator().manual_seed(10_000 + seed)
    patterns = torch.randn(outputs, 1, size, size, generator=g)
    patterns = nn.functional.avg_pool2d(patterns, 3, stride=1, padding=1)
    patterns = patterns / patterns.flatten(1).std(dim=1).view(-1, 1, 1, 1)
    batches = []
    for _ in range(steps):
        y = torch.randn(batch, outputs, generator=g)
        x = torch.einsum("bk,kchw->bchw", y, patterns)
        x = x + 0.5 * torch.randn(batch, 1, size, size, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([6, 8, 12])
    size = rng.choice([10, 12, 14])
    batch = rng.choice([16, 32, 48])
    outputs = rng.choice([2, 3, 4])
    steps = rng.choice([120, 150, 180])
    bad_lr = rng.choice([0.7, 1.0, 1.4])
    factor = rng.choice([15, 25, 40])
    warmup = rng.choice([0, 20, 40, 60])
    momentum = rng.choice([0.8, 0.9])

    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(1, channels, 3, padding=1),
        nn.LeakyReLU(0.2),
        nn.Conv2d(channels, 2 * channels, 3, padding=1),
        nn.LeakyReLU(0.2),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(8 * channels, outputs),
    )
    lr = bad_lr / factor if fixed else bad_lr
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    if warmup:
        # Linear warmup to the (too high) peak; the run breaks once the lr passes the stability
        # edge, so the failing step moves with the seed. The scheduler steps after each
        # optimizer step, as in a usual training loop.
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup))
        opt.register_step_post_hook(lambda *_: sched.step())
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, size, outputs),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
