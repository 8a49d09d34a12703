"""Interpretable N-BEATS forecaster: a trend stack whose blocks emit coefficients of a cubic
polynomial basis and a seasonality stack whose blocks emit Fourier coefficients (fixed bases
over the lookback and the horizon), doubly-residual as in the paper, trained on standardised
synthetic daily-cycle load windows with MSE. The optimiser is SGD with momentum 0.9 at lr=0.2,
the step size of the linear autoregressive baseline that the script started from. The basis
expansions have many more outputs than coefficients, so the effective curvature seen by the
coefficient layers is tens of times larger than for a linear AR model; at this step size the
first updates overshoot, the residual stream amplifies the error through the stacks and the loss
grows geometrically (~1.5 -> 20 -> 150 -> 1e3 -> 1e11) until it is inf/NaN by step 6. The fixed
run uses lr=0.02 and nothing else."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Oreshkin et al. 2019 N-BEATS interpretable configuration (trend/seasonality bases); "
          "classic SGD divergence when a learning rate is reused from a simpler model")

LOOKBACK, HORIZON, WIDTH = 48, 12, 64


def trend_basis(n, deg=3):
    t = torch.arange(n, dtype=torch.float32) / (LOOKBACK + HORIZON)
    return torch.stack([t ** p for p in range(deg + 1)])          # [deg+1, n]


def season_basis(n, harmonics=6, period=24.0):
    t = torch.arange(n, dtype=torch.float32)
    rows = [torch.ones(n)]
    for k in range(1, harmonics + 1):
        rows += [torch.cos(2 * math.pi * k * t / period), torch.sin(2 * math.pi * k * t / period)]
    return torch.stack(rows)


class BasisBlock(nn.Module):
    def __init__(self, back_basis, fore_basis):
        super().__init__()
        p = back_basis.shape[0]
        self.fc = nn.Sequential(nn.Linear(LOOKBACK, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH),
                                nn.ReLU(), nn.Linear(WIDTH, WIDTH), nn.ReLU())
        self.theta = nn.Linear(WIDTH, 2 * p)
        self.register_buffer("back_basis", back_basis)
        self.register_buffer("fore_basis", fore_basis)

    def forward(self, x):
        th_b, th_f = self.theta(self.fc(x)).chunk(2, dim=1)
        return th_b @ self.back_basis, th_f @ self.fore_basis


class InterpretableNBeats(nn.Module):
    def __init__(self):
        super().__init__()
        tb = trend_basis(LOOKBACK + HORIZON)
        sb = season_basis(LOOKBACK + HORIZON)
        self.trend = nn.ModuleList([BasisBlock(tb[:, :LOOKBACK], tb[:, LOOKBACK:]) for _ in range(2)])
        self.season = nn.ModuleList([BasisBlock(sb[:, :LOOKBACK], sb[:, LOOKBACK:]) for _ in range(2)])

    def forward(self, x):
        resid, fc = x, 0.0
        for blk in list(self.trend) + list(self.season):
            b, f = blk(resid)
            resid = resid - b
            fc = fc + f
        return fc


def make_batch(g, n):
    t = torch.arange(LOOKBACK + HORIZON, dtype=torch.float32)
    level = torch.randn(n, 1, generator=g)
    slope = 0.02 * torch.randn(n, 1, generator=g)
    a1 = 0.5 + torch.rand(n, 1, generator=g)
    a2 = 0.3 * torch.rand(n, 1, generator=g)
    ph = 2 * math.pi * torch.rand(n, 1, generator=g)
    y = level + slope * t + a1 * torch.sin(2 * math.pi * t / 24 + ph) + a2 * torch.sin(4 * math.pi * t / 24 + 2 * ph)
    y = y + 0.1 * torch.randn(n, LOOKBACK + HORIZON, generator=g)
    mu, sd = y[:, :LOOKBACK].mean(1, keepdim=True), y[:, :LOOKBACK].std(1, keepdim=True)
    y = (y - mu) / sd
    return y[:, :LOOKBACK].contiguous(), y[:, LOOKBACK:].contiguous()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = InterpretableNBeats()
    steps = 150
    batches = [make_batch(g, 64) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else 0.2, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
