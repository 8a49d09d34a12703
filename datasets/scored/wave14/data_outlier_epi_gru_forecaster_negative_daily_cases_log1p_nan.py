"""GRU encoder forecaster for regional COVID-style case counts (28-day history of log1p
daily cases + day-of-week one-hot -> next 7 days of log1p cases), trained on windows cut
from many regions.  Daily counts are obtained by differencing the published cumulative
series; one region has a downward data revision.

Mechanism
---------
Health agencies regularly revise cumulative counts downwards (de-duplication, reassignment
of cases to another region).  ``daily = cumsum.diff()`` then has one strongly negative day
(e.g. -2400) and ``torch.log1p`` of a value < -1 is NaN.  Every window that does not touch
that day is fine, so training runs calmly until the single batch containing the revised
day: the NaN enters the GRU input, the prediction and the loss, and the backward pass
poisons all weights (loss NaN from then on).

ORIGIN
------
None: the corrupt value is in the data; the GRU, the head and the loss only propagate it.

Fix
---
Clip the revision: ``daily.clamp_min(0)`` before ``log1p`` (the standard back-distribution
fallback).  Nothing else changes; only the batch containing the revised day differs.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("JHU CSSE / OWID COVID-19 case series: negative daily counts after cumulative "
          "revisions; log1p(diff(cumulative)) gives NaN in a GRU/LSTM forecaster")

HIST, HORIZON = 28, 7


def _regions(g, R, T):
    t = torch.arange(T, dtype=torch.float32)
    series = []
    for _ in range(R):
        peak = 60 + 120 * torch.rand(1, generator=g)
        width = 15 + 25 * torch.rand(1, generator=g)
        size = 10 ** (2.0 + 2.0 * torch.rand(1, generator=g))
        wave = size * torch.exp(-0.5 * ((t - peak) / width) ** 2)
        second = 0.5 * size * torch.exp(-0.5 * ((t - peak - 90) / (width * 1.3)) ** 2)
        weekly = 1.0 - 0.35 * ((t % 7) >= 5).float()          # weekend under-reporting
        lam = (wave + second + 3.0) * weekly
        daily = torch.poisson(lam, generator=g)
        series.append(torch.cumsum(daily, 0))
    return torch.stack(series)                               # cumulative counts (R, T)


class GRUForecaster(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(1 + 7, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, HORIZON)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(R=40, T=300, hidden=32, layers=1, B=16, lr=3e-3, steps=80, bad=44),
           dict(R=30, T=260, hidden=48, layers=2, B=12, lr=2e-3, steps=60, bad=27),
           dict(R=50, T=320, hidden=24, layers=1, B=24, lr=5e-3, steps=90, bad=63)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2020 + seed)
    T = cfg["T"]
    cum = _regions(g, cfg["R"], T)
    # region 0: cumulative count revised downwards on day `rev` (de-duplication)
    rev = 150
    cum[0, rev:] -= 0.9 * (cum[0, rev] - cum[0, rev - 30])
    daily = torch.diff(cum, dim=1, prepend=torch.zeros(cfg["R"], 1))
    if fixed:
        daily = daily.clamp_min(0)                          # FIX: clip revisions
    logd = torch.log1p(daily) / 5.0                          # NaN where daily < -1 (unfixed)
    dow = torch.nn.functional.one_hot(torch.arange(T) % 7, 7).float()

    model = GRUForecaster(cfg["hidden"], cfg["layers"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    L = HIST + HORIZON
    batches = []
    for step in range(cfg["steps"]):
        regs = torch.randint(1, cfg["R"], (cfg["B"],), generator=g)
        starts = torch.randint(0, T - L, (cfg["B"],), generator=g)
        if step == cfg["bad"]:
            regs[0], starts[0] = 0, rev - 10                 # window containing the revision
        idx = starts[:, None] + torch.arange(L)[None, :]
        win = logd[regs[:, None], idx]                       # (B, L)
        x = torch.cat([win[:, :HIST, None], dow[idx[:, :HIST]]], dim=2)
        y = win[:, HIST:]
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.SmoothL1Loss(beta=0.5),
                batches=batches, steps=cfg["steps"])
