"""unscaled_inputs: a Deep & Cross Network fed raw market columns and a raw target in cents.

Mechanism: a DCN regressor (Wang et al. 2017: a cross network ``x_{l+1} = x0 * (w_l . x_l + b_l)
+ x_l`` next to a ReLU MLP tower, concatenated into a linear head) that predicts a stock's
next-day closing price in cents from raw columns: last close (5e2-5e4 cents), volume (1e4-1e6
shares), shares outstanding (1e5-1e7, in thousands), bid-ask spread in cents, a 5-day return and
the turnover ratio. Nothing is standardised, and the target is in raw cents too. The cross
layers multiply x0 by a linear form of x, so their outputs are ~1e10 and more from step 0
(squared again by each further cross layer), the MLP tower's pre-activations are ~1e5-1e6, and
the first loss is 1e9-1e33 (or inf at once). With SGD + momentum (or Nesterov) at an lr that is
ordinary for standardised data (5e-3-1e-2), the first gradients are of the same absurd size and
the weights overflow to inf/NaN within one or two steps, under MSE or Huber loss alike.

ORIGIN is None: the problem is the data's scale, not a module.
Fixed: the same model, optimizer, lr and loss on standardised columns (z-scores, with log1p
applied to the heavy-tailed price/volume/shares/spread/turnover columns first) and a
standardised target.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = (
    "Wang, Fu, Fu & Wang 2017, 'Deep & Cross Network for Ad Click Predictions' (cross layers "
    "x0 * (w . x) + x), and forum threads on regression of raw prices/volumes where the loss is "
    "1e10+ or NaN until the features and the target are standardised (scikit-learn's "
    "StandardScaler / TransformedTargetRegressor advice)."
)


class DeepCross(nn.Module):
    def __init__(self, d: int, cross: int, width: int, depth: int) -> None:
        super().__init__()
        self.cross = nn.ModuleList(nn.Linear(d, 1) for _ in range(cross))
        layers: list[nn.Module] = []
        dims = [d] + [width] * depth
        for i in range(depth):
            layers += [nn.Linear(dims[i], dims[i + 1]), nn.ReLU()]
        self.deep = nn.Sequential(*layers)
        self.head = nn.Linear(d + width, 1)

    def forward(self, x0: torch.Tensor) -> torch.Tensor:
        x = x0
        for layer in self.cross:
            x = x0 * layer(x) + x
        return self.head(torch.cat([x, self.deep(x0)], dim=1))


def _columns(g: torch.Generator, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Raw columns and the raw target (next-day closing price, cents)."""
    price = torch.empty(n).uniform_(500.0, 50_000.0, generator=g)             # cents
    volume = torch.exp(torch.empty(n).uniform_(9.2, 13.8, generator=g))       # shares
    shares = torch.exp(torch.empty(n).uniform_(11.5, 16.1, generator=g))      # thousands
    spread = price * torch.empty(n).uniform_(0.0005, 0.01, generator=g)       # cents
    momentum = 0.05 * torch.randn(n, generator=g)                             # 5-day return
    turnover = volume / shares
    x = torch.stack([price, volume, shares, spread, momentum, turnover], dim=1)
    drift = 0.3 * momentum + 0.002 * torch.tanh(turnover * 100.0 - 1.0) - spread / price
    close = price * (1.0 + drift + 0.002 * torch.randn(n, generator=g))       # cents
    return x, close.unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    cross = rng.choice([1, 2, 3])
    width = rng.choice([32, 64])
    depth = rng.choice([2, 3])
    batch = rng.choice([64, 128])
    steps = rng.choice([150, 200, 250])
    nesterov = rng.choice([True, False])
    lr = rng.choice([0.005, 0.01])
    huber = rng.choice([True, False])

    g = torch.Generator().manual_seed(380_000 + seed)
    x, y = _columns(g, steps * batch)
    if fixed:
        x = x.clone()
        x[:, :4] = torch.log1p(x[:, :4])
        x[:, 5] = torch.log1p(x[:, 5])
        x = (x - x.mean(0)) / x.std(0)
        y = (y - y.mean()) / y.std()
    batches = [(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch])
               for i in range(steps)]

    torch.manual_seed(seed)
    model = DeepCross(x.shape[1], cross, width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=nesterov)
    loss_fn = nn.HuberLoss() if huber else nn.MSELoss()
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": loss_fn,
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
