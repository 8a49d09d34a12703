"""healthy (hard negative): float16 autocast with a GradScaler that skips a few early steps.

Nothing is wrong. The model trains under ``torch.autocast(float16)`` with a GradScaler whose
initial scale (2**20 to 2**24) is too high for these gradients: the first backward passes
overflow in float16, the scaler skips those optimizer steps and halves its scale each time, then
settles and training proceeds normally. Forward activations stay far below 65504. A detector that
reads the early inf gradients or the falling scale as fp16_overflow is wrong here.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "PyTorch's Automatic Mixed Precision recipe and GradScaler docs: 'if the gradients contain "
    "infs or NaNs, optimizer.step() is skipped and the scale is reduced'; a few skipped steps "
    "at the start of training are expected behaviour."
)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([2, 3])
    width = rng.choice([64, 128])
    d_in = rng.choice([16, 32])
    classes = rng.choice([4, 8])
    batch = rng.choice([32, 64])
    steps = rng.choice([150, 200])
    lr = rng.choice([1e-3, 2e-3])
    init_scale = 2.0 ** rng.choice([20, 22, 24])

    g = torch.Generator().manual_seed(130_000 + seed)
    teacher = torch.randn(d_in, classes, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        batches.append((x, (x @ teacher).argmax(dim=1)))

    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Linear(d_in, width), nn.GELU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.GELU()]
    layers.append(nn.Linear(width, classes))
    model = nn.Sequential(*layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.float16,
        "scaler": scaler,
    }
