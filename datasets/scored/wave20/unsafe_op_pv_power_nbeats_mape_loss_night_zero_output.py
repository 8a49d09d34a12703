"""Day-ahead photovoltaic (PV) power forecasting with an N-BEATS-style model (Oreshkin et
al. 2020: stacked fully-connected blocks with backcast/forecast heads and doubly residual
stacking), trained directly on MAPE as the competition metric.

Mechanism: loss = mean(|y_hat - y| / |y|).  During the first part of the run the sampled
windows are daytime forecasts (y > 0) and training is calm.  PV output is exactly zero at
night; when the first batch containing night-time horizons arrives the division |e| / 0 gives
inf (and 0/0 = NaN where the forecast is also exactly zero), so the loss is non-finite.

ORIGIN: None -- the unsafe division happens in the loss function, not inside a module.

Fix: guard the denominator, |e| / clamp_min(|y|, 0.05) (a floor of 5 % of rated power),
the usual epsilon/clamp recipe for MAPE on series with zeros.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = "MAPE undefined for zero actuals (Hyndman & Koehler 2006); PV forecasting with MAPE loss producing inf/NaN at night-time zero output"

_CFG = {0: dict(h=64, blocks=2, lr=1e-3, bs=32, steps=80, night=35),
        1: dict(h=96, blocks=3, lr=5e-4, bs=24, steps=100, night=60),
        2: dict(h=48, blocks=2, lr=2e-3, bs=48, steps=60, night=22)}
_LB, _H = 48, 8


class Block(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(_LB, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.backcast = nn.Linear(h, _LB)
        self.forecast = nn.Linear(h, _H)

    def forward(self, x):
        z = self.fc(x)
        return self.backcast(z), self.forecast(z)


class NBeats(nn.Module):
    def __init__(self, h, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(Block(h) for _ in range(blocks))

    def forward(self, x):
        f = 0
        for b in self.blocks:
            bc, fc = b(x)
            x = x - bc
            f = f + fc
        return f


def _pv(t, cloud):
    # hourly clear-sky bell between 6h and 18h, times a cloudiness factor; exactly 0 at night
    h = t % 24
    day = torch.sin((h - 6) / 12 * 3.14159).clamp_min(0)
    return day * cloud


def _batch(g, n, night):
    # daytime-only horizons before `night`, arbitrary start hours afterwards
    if night:
        start = torch.randint(0, 24, (n, 1), generator=g).float()
    else:
        start = 7 + 2 * torch.rand(n, 1, generator=g) - _LB  # horizon 7-9 h .. 15-17 h: daylight only
    t = start + torch.arange(_LB + _H).float().view(1, -1)
    cloud = 0.6 + 0.4 * torch.rand(n, 1, generator=g)
    p = _pv(t, cloud) * (1 + 0.03 * torch.randn(n, _LB + _H, generator=g)).clamp_min(0)
    return p[:, :_LB], p[:, _LB:]


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(61 + seed)
    model = NBeats(c["h"], c["blocks"])
    opt = torch.optim.Adam(model.parameters(), lr=c["lr"])
    batches = [_batch(g, c["bs"], s >= c["night"]) for s in range(c["steps"])]

    def mape(y_hat, y):
        den = y.abs().clamp_min(0.05) if fixed else y.abs()
        return ((y_hat - y).abs() / den).mean()

    return dict(model=model, optimizer=opt, loss_fn=mape, batches=batches, steps=c["steps"])
