"""healthy: a plain ReLU MLP regressor on standardised data, trained with Adam.

Nothing is wrong: standardised inputs and targets, default init, a sane learning rate. About half
of the ReLU units are inactive on any given sample (normal for ReLU), and the loss falls steadily
and then flattens near the noise floor.

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
    "The standard PyTorch regression recipe (e.g. the 'Learning PyTorch with Examples' tutorial "
    "and scikit-learn style standardised tabular data): an MLP with Adam at lr 1e-3."
)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([2, 3, 4])
    width = rng.choice([32, 64, 128])
    d_in = rng.choice([8, 16, 32])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([150, 200, 300])
    lr = rng.choice([1e-3, 2e-3, 3e-3])

    g = torch.Generator().manual_seed(100_000 + seed)
    proj = torch.randn(d_in, 4, generator=g) / d_in**0.5
    mix = torch.randn(4, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        z = x @ proj
        y = (torch.tanh(1.5 * z) @ mix / 1.2 + 0.3 * z[:, 0] * z[:, 1]).unsqueeze(1)
        batches.append((x, y + 0.05 * torch.randn(batch, 1, generator=g)))

    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Linear(d_in, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, 1))
    model = nn.Sequential(*layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
