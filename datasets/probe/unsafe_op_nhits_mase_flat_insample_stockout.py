"""N-HiTS retail-demand forecaster trained with a hand-written MASE loss, which divides the
error by the lookback's seasonal-naive error mean|y[t] - y[t-7]|. One SKU had a 28-day
stockout, i.e. exactly one all-zero lookback window; when the shuffled loader first serves
it (mid-run), masep == 0, 1/masep = inf and the loss turns inf/NaN.
fixed=True uses N-BEATS' divide_no_nan (a zero-scale window gets weight 0) instead of the
bare 1/masep; data, model and optimiser are unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None  # the 1/masep lives in loss_fn, outside any module
SOURCE = ("N-BEATS reference code (ElementAI/N-BEATS, common/torch/losses.py, widely copied into "
          "Time-Series-Library forks): mase_loss computes masep = mean|insample[:, f:] - insample[:, :-f]| "
          "and guards it with divide_no_nan(mask, masep) because flat lookbacks give masep == 0; "
          "re-implementations that write 1/masep hit inf on stocked-out / intermittent retail series)")

L, H, SEAS = 28, 7, 7


class NHiTSBlock(nn.Module):
    def __init__(self, pool, n_knots, hidden=128):
        super().__init__()
        self.pool = nn.MaxPool1d(pool, stride=pool, ceil_mode=True)
        in_dim = math.ceil(L / pool)
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU())
        self.theta = nn.Linear(hidden, L + n_knots)
        self.n_knots = n_knots

    def forward(self, x):
        z = self.pool(x.unsqueeze(1)).squeeze(1)
        t = self.theta(self.mlp(z))
        backcast, knots = t[:, :L], t[:, L:]
        forecast = F.interpolate(knots.unsqueeze(1), size=H, mode="linear",
                                 align_corners=True).squeeze(1)
        return backcast, forecast


class NHiTS(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([NHiTSBlock(4, 2), NHiTSBlock(2, 4), NHiTSBlock(1, 7)])

    def forward(self, insample):
        # DeepAR-style mean scaling: nu = 1 + mean(lookback), never zero
        nu = 1.0 + insample.mean(dim=1, keepdim=True)
        resid = insample / nu
        forecast = 0.0
        for blk in self.blocks:
            b, f = blk(resid)
            resid = resid - b
            forecast = forecast + f
        return forecast * nu


def divide_no_nan(a, b):
    res = a / b
    res = torch.where(torch.isfinite(res), res, torch.zeros_like(res))
    return res


def make_loss(fixed):
    def mase_loss(forecast, target):
        insample, future = target[:, :L], target[:, L:]
        masep = (insample[:, SEAS:] - insample[:, :-SEAS]).abs().mean(dim=1, keepdim=True)
        if fixed:
            inv = divide_no_nan(torch.ones_like(masep), masep)
        else:
            inv = 1.0 / masep
        return ((future - forecast).abs() * inv).mean()
    return mase_loss


def make_sales(g, n_series=48, T=200):
    t = torch.arange(T, dtype=torch.float32)
    level = torch.exp(torch.randn(n_series, 1, generator=g) * 0.6 + 2.3)       # ~3..40 units/day
    level = level.clamp_min(4.0)
    weekly = 1.0 + 0.35 * torch.randn(n_series, 7, generator=g).clamp(-2, 2)
    weekly = weekly.clamp_min(0.3)
    season = weekly[:, (t.long() % 7)]
    trend = 1.0 + 0.002 * torch.randn(n_series, 1, generator=g) * t
    rate = (level * season * trend.clamp_min(0.3))
    sales = torch.poisson(rate, generator=g)
    # one SKU out of stock for four weeks (28 days): sales are exactly zero
    sku = int(torch.randint(0, n_series, (1,), generator=g))
    start = int(torch.randint(40, T - 40 - L, (1,), generator=g))
    sales[sku, start:start + 28] = 0.0
    return sales


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    sales = make_sales(g)
    n_series, T = sales.shape
    windows = sales.unfold(1, L + H, 1).reshape(-1, L + H)   # every (series, t) window
    B, steps = 64, 240
    n_per_epoch = windows.shape[0] // B
    batches = []
    while len(batches) < steps:
        perm = torch.randperm(windows.shape[0], generator=g)
        for i in range(n_per_epoch):
            w = windows[perm[i * B:(i + 1) * B]]
            batches.append((w[:, :L].clone(), w.clone()))
            if len(batches) == steps:
                break
    model = NHiTS()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(fixed), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
