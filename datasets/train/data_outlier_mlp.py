"""data_outlier in a healthy tabular MLP regression (SGD with momentum).

Mechanism: the run trains normally until one batch, at a seed-dependent step in the middle of the
run, carries one corrupt record: a NaN feature (a missing value parsed as NaN), a feature of
1e8 (a sensor glitch or a unit mix-up) or a target of 1e8. A NaN makes the loss NaN at once; a
1e8 value makes the loss and gradients ~1e12 or more and the next SGD updates send the weights to
inf/NaN.

ORIGIN is None: the failure starts in the input batch, not in a module.
Fixed: the same batches, with the corrupt record replaced by its clean values.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum threads 'loss suddenly becomes NaN in the middle of training' traced to one "
    "NaN or absurd value in the dataset (e.g. missing values read as NaN, a 1e8 sensor glitch); "
    "cleaning or filtering the record fixes it."
)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([2, 3, 4])
    width = rng.choice([32, 64, 128])
    d_in = rng.choice([6, 10, 16])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([0.01, 0.02, 0.05])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = rng.choice(["nan_feature", "huge_feature", "huge_target"])

    g = torch.Generator().manual_seed(40_000 + seed)
    w_true = torch.randn(d_in, generator=g) / d_in**0.5
    v_true = torch.randn(d_in, generator=g) / d_in**0.5
    batches = []
    for step in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        y = (x @ w_true + 0.5 * torch.relu(x @ v_true) ** 2).unsqueeze(1)
        y = y + 0.1 * torch.randn(batch, 1, generator=g)
        row = int(torch.randint(0, batch, (1,), generator=g))
        col = int(torch.randint(0, d_in, (1,), generator=g))
        if step == bad_step and not fixed:
            x, y = x.clone(), y.clone()
            if kind == "nan_feature":
                x[row, col] = float("nan")
            elif kind == "huge_feature":
                x[row, col] = 1e8
            else:
                y[row, 0] = 1e8
        batches.append((x, y))

    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Linear(d_in, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, 1))
    model = nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
