"""unscaled_inputs: tabular regression on raw physical units (an MLP trained with SGD).

Mechanism: house-price-like data fed as is. The features are in their raw units (floor area
~1e3, lot size ~1e4, distance ~1e3-1e4, year ~2e3, a count ~1e5) and the target is ~1e4, with no
standardisation. At step 0 the pre-activations are in the thousands and the MSE loss is ~1e8;
the gradient of the first layer is the error (~1e4) times the inputs (~1e4), so the first SGD
updates overshoot by many orders of magnitude and the loss goes to inf/NaN within a few steps.

ORIGIN is None: the cause is in the data pipeline (no scaling), before any module; the first
Linear only receives it.
Fixed: the same model, optimizer and samples with the features and the target standardised
(z-scores with the mean and std of the training data).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = (
    "The Stack Overflow / PyTorch forum staple 'linear regression loss is NaN/inf' on house-price "
    "style data (raw square feet, prices in dollars): without feature and target "
    "standardisation SGD diverges; scikit-learn's and PyTorch tutorials' StandardScaler fix."
)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([1, 2, 3])
    width = rng.choice([16, 32, 64])
    d_in = rng.choice([4, 6, 8])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([0.01, 0.02, 0.04])
    momentum = rng.choice([0.5, 0.9])

    g = torch.Generator().manual_seed(60_000 + seed)
    n = steps * batch
    # Raw units: each feature has its own location (1e2-1e5) and spread (10-40% of it).
    loc = 10.0 ** (2.0 + 3.0 * torch.rand(d_in, generator=g))
    spread = loc * (0.1 + 0.3 * torch.rand(d_in, generator=g))
    z = torch.randn(n, d_in, generator=g)
    x_raw = loc + spread * z
    w = torch.randn(d_in, generator=g) / d_in**0.5
    signal = z @ w + 0.3 * torch.tanh(z[:, 0] * z[:, 1 % d_in])
    y_raw = (1e4 * (1.0 + 0.25 * signal) + 200.0 * torch.randn(n, generator=g)).unsqueeze(1)
    if fixed:
        x = (x_raw - x_raw.mean(0)) / x_raw.std(0)
        y = (y_raw - y_raw.mean(0)) / y_raw.std(0)
    else:
        x, y = x_raw, y_raw
    batches = [
        (x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch]) for i in range(steps)
    ]

    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Linear(d_in, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, 1))
    model = nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
