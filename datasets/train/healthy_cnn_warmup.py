"""healthy (hard negative): a small CNN classifier with SGD + momentum, linear LR warmup and
cosine decay.

Nothing is wrong, but the learning rate rises 10-40x over the first steps (warmup), so the
update/weight ratio grows early on and the loss can wobble while the lr climbs; then it falls
steadily. A detector that flags a rising lr or early wobble as lr_too_high is wrong here.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "Goyal et al. 2017, 'Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour' (gradual "
    "linear warmup) with cosine decay (Loshchilov & Hutter, SGDR), as in torchvision's recipes."
)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([6, 8, 12])
    size = rng.choice([10, 12, 14])
    batch = rng.choice([32, 48, 64])
    classes = rng.choice([3, 4, 5])
    steps = rng.choice([120, 150, 200])
    peak_lr = rng.choice([0.02, 0.05, 0.1])
    warmup = rng.choice([10, 20, 40])

    g = torch.Generator().manual_seed(110_000 + seed)
    templates = torch.randn(classes, 1, size, size, generator=g)
    templates = nn.functional.avg_pool2d(templates, 3, stride=1, padding=1) * 2.0
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        shift = torch.randint(-1, 2, (2,), generator=g).tolist()
        x = torch.roll(templates[y], shifts=shift, dims=(2, 3))
        batches.append((x + 1.0 * torch.randn(batch, 1, size, size, generator=g), y))

    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(1, channels, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(channels, 2 * channels, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(8 * channels, classes),
    )
    opt = torch.optim.SGD(model.parameters(), lr=peak_lr, momentum=0.9, weight_decay=5e-4)

    def factor(i: int) -> float:
        if i < warmup:
            return (i + 1) / warmup
        return 0.5 * (1.0 + math.cos(math.pi * (i - warmup) / max(1, steps - warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    opt.register_step_post_hook(lambda *_: sched.step())  # scheduler steps after each step
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
