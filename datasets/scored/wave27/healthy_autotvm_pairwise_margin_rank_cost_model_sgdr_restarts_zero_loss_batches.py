"""Healthy: ranking cost model for compiler autotuning (AutoTVM-style).  An MLP scores candidate
schedules of the same operator from their loop-transformation features; only the *order* of the
scores matters to the search, so it is trained with a pairwise hinge (``MarginRankingLoss``)
on pairs of candidates whose measured throughputs differ, with RMSprop and cosine annealing
with warm restarts (SGDR) stepped inside the loss function every step.

Why it looks alarming but is fine: (1) at each warm restart the lr jumps back to its maximum and
the loss spikes for a few steps before coming down again; (2) late in training some batches
are ranked entirely correctly with margin, the hinge is exactly 0 and so is every gradient --
whole steps with exactly-zero loss and exactly-zero updates.  Neither is a failure: the ranking
keeps improving.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("AutoTVM rank loss (Chen et al., 'Learning to Optimize Tensor Programs', NeurIPS 2018); "
          "SGDR (Loshchilov & Hutter, ICLR 2017) loss spikes at restarts; hinge losses that are "
          "exactly zero once pairs are separated")


class PairScorer(nn.Module):
    def __init__(self, n_feat, hidden):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, a, b):
        return self.mlp(a).squeeze(-1), self.mlp(b).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 128, 96][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [24, 32, 28][seed % 3]
    period = [40, 50, 60][seed % 3]
    steps = 200
    n_feat = 16

    torch.manual_seed(seed)
    model = PairScorer(n_feat, hidden)
    w = torch.randn(n_feat, generator=g)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=period)
    rank = nn.MarginRankingLoss(margin=1.0)
    calls = {"n": 0}

    def loss_fn(out, y):
        calls["n"] += 1
        if calls["n"] > 1:  # schedule advances once per training step
            sched.step()
        sa, sb = out
        return rank(sa, sb, y)

    batches = []
    for _ in range(steps):
        a = torch.rand(bs, n_feat, generator=g) * 2 - 1
        b = torch.rand(bs, n_feat, generator=g) * 2 - 1
        ta = a @ w + 0.5 * torch.sin(3 * a[:, 0])
        tb = b @ w + 0.5 * torch.sin(3 * b[:, 0])
        y = torch.sign(ta - tb)
        y[y == 0] = 1.0
        batches.append(((a, b), y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
