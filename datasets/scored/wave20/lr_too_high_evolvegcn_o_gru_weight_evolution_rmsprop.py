"""EvolveGCN-O (Pareja et al. 2020) on a sequence of graph snapshots: the GCN
weight matrix is itself evolved across snapshots by a GRU cell (rows of W as the
batch), each snapshot's node embeddings feed a linear head predicting next-
snapshot node activity (regression, MSE). RMSprop.

Mechanism: the user trains with RMSprop at lr 0.3-0.5 (the value from a small
logistic-regression baseline). RMSprop divides by the running RMS of the
gradient, so every parameter moves by ~lr per step -- far above the weights'
scale (update/weight ratio ~1): the head and the GRU weights overshoot and the
loss rises by orders of magnitude instead of falling.
ORIGIN is None: the lr is global.
Fix: lr 5e-3 with the same optimizer.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "EvolveGCN (IBM/EvolveGCN) dynamic-graph regression retrained with RMSprop and a large lr"


class EvolveGCNO(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.w0 = nn.Parameter(torch.randn(d, h) / d ** 0.5)
        self.evolve = nn.GRUCell(h, h)
        self.act = nn.ReLU()
        self.head = nn.Linear(h, 1)

    def forward(self, xs, adjs):
        w, outs = self.w0, []
        for t in range(xs.size(0)):
            w = self.evolve(w, w)
            outs.append(self.head(self.act(adjs[t] @ xs[t] @ w)).squeeze(-1))
        return torch.stack(outs)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=60, d=16, h=16, T=4, lr=0.3, steps=60), dict(n=80, d=8, h=32, T=5, lr=0.5, steps=70),
           dict(n=50, d=12, h=24, T=3, lr=0.4, steps=50)][seed % 3]
    lr = 1e-3 * 5 if fixed else cfg["lr"]
    g = torch.Generator().manual_seed(seed)
    n, d, T = cfg["n"], cfg["d"], cfg["T"]
    wt = torch.randn(d, generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        adjs, xs = [], []
        for t in range(T):
            a = (torch.rand(n, n, generator=g) < 0.08).float(); a = ((a + a.T) > 0).float() + torch.eye(n)
            dinv = a.sum(1).rsqrt(); adjs.append(dinv[:, None] * a * dinv[None, :])
            xs.append(torch.randn(n, d, generator=g))
        adjs, xs = torch.stack(adjs), torch.stack(xs)
        y = torch.tanh(adjs @ (xs @ wt).unsqueeze(-1)).squeeze(-1)
        batches.append(((xs, adjs), y))
    torch.manual_seed(seed)
    model = EvolveGCNO(d, cfg["h"])
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
