"""APPNP (Klicpera et al. 2019, "predict then propagate") for power-grid state
estimation: a 2-layer MLP on standardised per-bus measurements (P, Q injections,
bus type) predicts a per-bus voltage deviation from nominal (p.u., mostly a
voltage drop, i.e. negative), then K steps of personalised-PageRank propagation
over the normalised grid adjacency smooth it. MSE loss, Adam.

Mechanism: the MLP was copied from the classification example as
Sequential(Linear, ReLU, Linear, ReLU) -- the trailing ReLU was kept. The
targets are mostly negative, so the gradient keeps pushing the output
pre-activation down; within a few steps it is negative for every bus, the final
ReLU outputs exactly 0 with zero gradient, nothing upstream receives gradient
any more and the MSE freezes at mean(y^2): a stall.
ORIGIN is the trailing ReLU (mlp.3), the unit that dies.
Fix: drop the output ReLU (Sequential(Linear, ReLU, Linear)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = "APPNP (PyG APPNP layer) regression on IEEE-bus-like grids; ReLU left on a regression output (copied classifier head), 'loss stuck, predictions all zero' forum reports"


class APPNPNet(nn.Module):
    def __init__(self, d, h, a_hat, fixed, K=10, alpha=0.1):
        super().__init__()
        layers = [nn.Linear(d, h), nn.ReLU(), nn.Linear(h, 1)]
        if not fixed:
            layers.append(nn.ReLU())  # leftover from the classifier template
        else:
            layers.append(nn.Identity())
        self.mlp = nn.Sequential(*layers)
        self.register_buffer("a_hat", a_hat)
        self.K, self.alpha = K, alpha

    def forward(self, x):
        h = self.mlp(x)
        z = h
        for _ in range(self.K):
            z = (1 - self.alpha) * (self.a_hat @ z) + self.alpha * h
        return z.squeeze(-1)


def grid(g, n):
    # ring + random tie lines, like a meshed transmission grid
    a = torch.zeros(n, n)
    idx = torch.arange(n)
    a[idx, (idx + 1) % n] = 1
    extra = torch.randint(0, n, (n // 3, 2), generator=g)
    a[extra[:, 0], extra[:, 1]] = 1
    a = ((a + a.T) > 0).float()
    a.fill_diagonal_(1.0)
    dinv = a.sum(1).rsqrt()
    return dinv[:, None] * a * dinv[None, :]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=118, h=32, lr=0.01, steps=80), dict(n=57, h=64, lr=0.005, steps=100),
           dict(n=150, h=16, lr=0.02, steps=60)][seed % 3]
    lr = cfg["lr"]
    g = torch.Generator().manual_seed(seed)
    n, d = cfg["n"], 6
    a_hat = grid(g, n)
    w = torch.randn(d, generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        x = torch.randn(n, d, generator=g)
        y = a_hat @ (a_hat @ (torch.tanh(x @ w) + 0.3 * x[:, 0] ** 2))
        y = -(y - y.min()) / 0.5 + 0.1 * torch.randn(n, generator=g)  # voltage drop (p.u., scaled)
        batches.append((x, y))
    torch.manual_seed(seed)
    model = APPNPNet(d, cfg["h"], a_hat, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
