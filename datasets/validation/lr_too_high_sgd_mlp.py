"""lr_too_high on an MLP classifier trained with plain SGD or SGD + momentum and cross-entropy.

Mechanism: a LeakyReLU MLP (2-4 hidden layers; leaky so that units cannot die and hide the
divergence) on a Gaussian-cluster classification task that it learns in a few dozen steps at a sane
lr (0.1-0.2 plain, 0.015-0.02 with momentum 0.9), trained at an lr 50-200x higher. Each step then
moves the weights by more than their own size: the logits and hidden activations grow, and because
the gradient of a linear layer is the product of its input activation and the back-propagated
error, the growth compounds from step to step until the weights, logits and loss overflow to
inf/NaN after a seed-dependent number of steps. Some seeds warm the lr up linearly, which moves the
failing step later.

ORIGIN is None: the cause is the optimizer's configuration, shared by every layer, not a module.
Fixed: the same run at the sane learning rate (the peak divided by the same factor).
"""

from __future__ import annotations

import itertools
import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "The PyTorch forum / Stack Overflow staple 'CrossEntropyLoss becomes nan after a few "
    "iterations' with SGD at lr 1-10 (e.g. the MNIST MLP examples with lr=1.0), and CS231n's "
    "babysitting notes: loss exploding to NaN means the learning rate is too high."
)


def _data(seed: int, steps: int, batch: int, d_in: int, classes: int) -> list:
    """Gaussian clusters: each class has a random mean in d_in dimensions, unit noise."""
    g = torch.Generator().manual_seed(170_000 + seed)
    means = 2.0 * torch.randn(classes, d_in, generator=g) / d_in**0.25
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        x = means[y] + torch.randn(batch, d_in, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    hidden_layers = rng.choice([2, 3, 4])
    width = rng.choice([64, 128, 256])
    d_in = rng.choice([16, 32, 64])
    classes = rng.choice([5, 10])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([100, 150, 200])
    momentum = rng.choice([0.0, 0.9])
    sane_lr = rng.choice([0.1, 0.2]) if momentum == 0.0 else rng.choice([0.015, 0.02])
    factor = rng.choice([50, 100, 200])
    warmup = rng.choice([0, 0, 20, 50])

    torch.manual_seed(seed)
    net = nn.Sequential()
    dims = [d_in] + [width] * hidden_layers
    for a, b in itertools.pairwise(dims):
        net.append(nn.Linear(a, b))
        net.append(nn.LeakyReLU(0.1))
    net.append(nn.Linear(width, classes))
    model = nn.Sequential()
    model.add_module("net", net)
    lr = sane_lr if fixed else sane_lr * factor
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    if warmup:
        # Linear warmup to the peak; the scheduler steps after each optimizer step.
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup))
        opt.register_step_post_hook(lambda *_: sched.step())
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, d_in, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
