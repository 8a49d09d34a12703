"""N-BEATS (Oreshkin et al. 2020, generic architecture) forecasting weekly SKU demand: stacks of
fully-connected blocks, each emitting a backcast (subtracted from its input, doubly residual)
and a partial forecast (summed), trained with SGD + momentum on MSE of per-series scaled demand.

Mechanism: the learning rate was taken from an lr range test ("lr finder") by reading off the lr
at the *minimum* of the smoothed loss curve instead of a point an order of magnitude before it,
i.e. at the edge of divergence of a short probe run. Over a real run the steps are too large
(SGD lr 2.5-3.5 on this small-loss problem): with 3-4 blocks whose forecasts are summed, each
step overshoots, the forecast magnitude grows step after step and the loss either explodes to
inf/NaN or keeps bouncing above its starting level (seed-dependent).

ORIGIN: "blocks.0.fc.0" -- the first fully-connected layer of the first block, the first layer
the over-sized updates hit (all blocks are over-stepped; their outputs add up).

Fix (fixed=True): the learning rate one order of magnitude below the lr-finder minimum (the
usual rule of thumb). Same model, loss, data and batches.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = "blocks.0.fc.0"
SOURCE = ("fastai/pytorch-lightning lr_find misuse (picking the loss-minimum lr instead of ~10x "
          "lower) on N-BEATS-style forecasters; loss explodes to nan after some steps")


class Block(nn.Module):
    def __init__(self, lookback, horizon, width, n_layers):
        super().__init__()
        layers, d = [], lookback
        for _ in range(n_layers):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.fc = nn.Sequential(*layers)
        self.backcast = nn.Linear(width, lookback)
        self.forecast = nn.Linear(width, horizon)

    def forward(self, x):
        h = self.fc(x)
        return self.backcast(h), self.forecast(h)


class NBeats(nn.Module):
    def __init__(self, lookback, horizon, width, n_layers, n_blocks):
        super().__init__()
        self.blocks = nn.ModuleList([Block(lookback, horizon, width, n_layers) for _ in range(n_blocks)])

    def forward(self, x):
        residual, forecast = x, 0.0
        for block in self.blocks:
            b, f = block(residual)
            residual = residual - b
            forecast = forecast + f
        return forecast


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    horizon = [8, 6, 12][seed % 3]
    lookback = 3 * horizon
    width = [64, 96, 48][seed % 3]
    n_layers = [3, 4, 3][seed % 3]
    n_blocks = [3, 3, 4][seed % 3]
    batch = [64, 48, 96][seed % 3]
    lr_finder_min = [3.0, 2.5, 3.5][seed % 3]
    steps = 200

    def sample(b):
        t = np.arange(lookback + horizon)[None, :] + rng.integers(0, 52, size=(b, 1))
        level = rng.uniform(20, 200, size=(b, 1))
        season = rng.uniform(0.1, 0.4, size=(b, 1)) * np.sin(2 * np.pi * t / 52 + rng.uniform(0, 6.3, (b, 1)))
        trend = rng.normal(0, 0.004, size=(b, 1)) * t
        y = level * (1 + season + trend) * np.exp(0.08 * rng.normal(size=t.shape))
        scale = y[:, :lookback].mean(1, keepdims=True)
        y = y / scale - 1.0
        return (torch.tensor(y[:, :lookback], dtype=torch.float32),
                torch.tensor(y[:, lookback:], dtype=torch.float32))

    batches = [sample(batch) for _ in range(steps)]
    model = NBeats(lookback, horizon, width, n_layers, n_blocks)
    lr = lr_finder_min / 10.0 if fixed else lr_finder_min
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
