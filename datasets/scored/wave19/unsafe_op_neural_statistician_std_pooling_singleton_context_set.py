"""Neural-Statistician-style meta-regressor: a statistic network summarises each task's context
set with mean and standard-deviation pooling of per-point embeddings, and a decoder predicts
the task's target points from that summary.  Episodes have a random context size in 1..K_max.

Mechanism: each training step is a batch of sinusoid tasks sharing one context size K.  The
statistic network embeds every (x, y) context pair and pools over the set with
[mean, torch.std(dim=set)].  torch.std uses Bessel's correction, so for an episode with a
single context point it divides 0 by n - 1 = 0 and returns NaN.  The first K = 1 episode
(step 9-27 depending on the seed; until then the run is calm) turns the summary, the prediction and
the loss into NaN, and the NaN gradients overwrite every weight.  (Just switching to the
biased std is not enough either: sqrt(0) has an infinite derivative.)

ORIGIN: `stat.pool`, the pooling module whose std produces the first NaN.

Fix: pool with sqrt(var(unbiased=False) + 1e-5): a singleton set has spread ~0 instead of
0/0, and the sqrt never sees an exact zero.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "stat.pool"
SOURCE = ("Edwards & Storkey 2017 'Towards a Neural Statistician' (statistic network with set "
          "pooling); PyTorch warning 'std(): degrees of freedom is <= 0' and forum threads on "
          "NaN from torch.std over a single element / sqrt backward at zero")


class MeanStdPool(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.safe = safe

    def forward(self, h):                       # h: (B, K, d) -> (B, 2d)
        if self.safe:
            spread = torch.sqrt(h.var(dim=1, unbiased=False) + 1e-5)
        else:
            spread = h.std(dim=1)
        return torch.cat([h.mean(dim=1), spread], dim=-1)


class StatisticNet(nn.Module):
    def __init__(self, hidden, d_c, safe):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.pool = MeanStdPool(safe)
        self.post = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, d_c))

    def forward(self, xc, yc):
        return self.post(self.pool(self.embed(torch.cat([xc, yc], dim=-1))))


class NeuralStatisticianRegressor(nn.Module):
    def __init__(self, hidden, d_c, safe):
        super().__init__()
        self.stat = StatisticNet(hidden, d_c, safe)
        self.decoder = nn.Sequential(nn.Linear(1 + d_c, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, xc, yc, xt):
        c = self.stat(xc, yc)                                   # (B, d_c)
        c = c.unsqueeze(1).expand(-1, xt.shape[1], -1)
        return self.decoder(torch.cat([xt, c], dim=-1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=64, d_c=16, B=48, k_max=10, n_t=20, lr=3e-3, steps=250),
           dict(hidden=96, d_c=32, B=40, k_max=16, n_t=16, lr=2e-3, steps=220),
           dict(hidden=48, d_c=16, B=64, k_max=12, n_t=24, lr=3e-3, steps=240)][seed % 3]
    g = torch.Generator().manual_seed(4700 + seed)
    batches = []
    B, n_t = cfg["B"], cfg["n_t"]
    for t in range(cfg["steps"]):
        K = int(torch.randint(1, cfg["k_max"] + 1, (1,), generator=g))
        A = 0.1 + 4.9 * torch.rand(B, 1, 1, generator=g)
        phase = math.pi * torch.rand(B, 1, 1, generator=g)
        xc = -5 + 10 * torch.rand(B, K, 1, generator=g)
        xt = -5 + 10 * torch.rand(B, n_t, 1, generator=g)
        yc = A * torch.sin(xc + phase)
        yt = A * torch.sin(xt + phase)
        batches.append(((xc, yc, xt), yt))

    torch.manual_seed(seed)
    model = NeuralStatisticianRegressor(cfg["hidden"], cfg["d_c"], safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches,
                steps=cfg["steps"])
