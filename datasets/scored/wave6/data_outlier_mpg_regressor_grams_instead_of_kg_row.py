"""Fuel-economy regression (auto-mpg style): 7 numeric car attributes, standardised with means/stds
computed on a clean reference table, into an nn.Sequential MLP (7-32-32-1, ReLU), MSE, plain SGD.
One scraped listing in the 90th batch has its curb weight recorded in grams instead of kilograms
(1000x), which after standardisation is a z-score of ~3000 in the weight column. That single row
drives the first layer (net.0) pre-activations to ~1e3, the prediction to ~1e3 standard
deviations, and the batch MSE from ~0.03 to ~1e4-1e5; the SGD step it produces multiplies the
first-layer weights by orders of magnitude, after which every batch produces astronomically large
predictions (loss ~1e18 on the next step) and the run turns inf/NaN. Fix: drop the corrupt row
(rows whose standardised features exceed |z| > 20 are filtered out before batching).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("unit-mix-up rows in scraped tabular data (auto-mpg / car listings: weight in g vs kg); "
          "'loss suddenly becomes nan mid-training on tabular regression' forum reports")

BAD_STEP = 90


class MPGRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    # raw attributes: cylinders, displacement(l), horsepower, weight(kg), accel(s), year, origin
    mean = torch.tensor([5.5, 3.2, 105.0, 1350.0, 15.5, 76.0, 1.6])
    std = torch.tensor([1.7, 1.7, 38.0, 380.0, 2.8, 3.7, 0.8])
    coef = torch.tensor([-0.1, -0.3, -0.6, -1.0, 0.15, 0.35, 0.2])

    def sample(n):
        z = torch.randn(n, 7, generator=g)
        raw = mean + std * z
        mpg = 23.5 + 7.8 * (torch.tanh(z @ coef / 1.5) + 0.1 * torch.randn(n, generator=g))
        return raw, mpg

    steps, B = 200, 32
    batches = []
    for step in range(steps):
        raw, mpg = sample(B)
        if step == BAD_STEP:
            raw[5, 3] = raw[5, 3] * 1000.0          # weight stored in grams for one listing
        x = (raw - mean) / std
        y = (mpg - 23.5) / 7.8
        if fixed:
            keep = x.abs().max(dim=1).values < 20
            x, y = x[keep], y[keep]
        batches.append((x, y))

    model = MPGRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.mse_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
