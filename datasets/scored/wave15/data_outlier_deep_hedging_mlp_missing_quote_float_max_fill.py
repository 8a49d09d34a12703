"""Deep hedging (Buehler et al. 2019): a per-time-step MLP maps (log-moneyness, time to
maturity, previous hedge) to the hedge ratio of a short call; the loss is the mean squared
terminal hedging error  (premium + sum_t delta_t (S_{t+1} - S_t) - payoff)^2.

Mechanism: the simulated/historical spot paths are loaded from a parquet where missing quotes
were NaN; the loader ran np.nan_to_num(paths, nan=np.finfo(np.float32).max) "to keep the
tensor finite".  One batch holds a path with such a value: the price increment is ~3e38, the
squared P&L overflows to inf, and the backward pass writes inf/NaN into every weight.  All
other batches are clean.

ORIGIN: None - one corrupt batch of data.
Fix: the corrupt path is dropped (the batch is rebuilt from clean paths).
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Buehler et al. 2019 'Deep hedging'; np.nan_to_num sentinel fills (float max) in quote data"


class HedgeNet(nn.Module):
    def __init__(self, width, n_steps, T=0.25, K=100.0):
        super().__init__()
        self.n, self.T, self.K = n_steps, T, K
        self.policy = nn.Sequential(nn.Linear(3, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))
        self.premium = nn.Parameter(torch.zeros(1))

    def forward(self, S):  # S: (B, n+1)
        B = S.shape[0]
        delta = torch.zeros(B, 1)
        pnl = self.premium.expand(B)
        for t in range(self.n):
            tau = torch.full((B, 1), self.T * (1 - t / self.n))
            feat = torch.cat([torch.log(S[:, t:t + 1] / self.K), tau, delta], 1)
            delta = self.policy(feat)
            pnl = pnl + delta.squeeze(1) * (S[:, t + 1] - S[:, t])
        return pnl  # hedged P&L before paying the claim


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=10, w=32, bs=256, lr=5e-3, bad=30), dict(n=12, w=24, bs=256, lr=5e-3, bad=55), dict(n=8, w=48, bs=384, lr=5e-3, bad=18)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(400 + seed)
    model = HedgeNet(cfg["w"], cfg["n"])
    steps = 80
    dt = 0.25 / cfg["n"]
    batches = []
    for s in range(steps):
        z = torch.randn(cfg["bs"], cfg["n"], generator=g)
        logS = math.log(100.0) + torch.cumsum(-0.5 * 0.2 ** 2 * dt + 0.2 * math.sqrt(dt) * z, 1)
        S = torch.cat([torch.full((cfg["bs"], 1), 100.0), logS.exp()], 1)
        if s == cfg["bad"] and not fixed:
            S[5, cfg["n"] // 2] = torch.finfo(torch.float32).max  # nan_to_num fill of a missing quote
        payoff = (S[:, -1] - 100.0).clamp_min(0.0)
        batches.append((S, payoff))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loss_fn = lambda pnl, payoff: ((pnl - payoff) ** 2).mean()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
