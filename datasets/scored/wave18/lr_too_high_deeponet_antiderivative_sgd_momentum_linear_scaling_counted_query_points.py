"""Unstacked DeepONet (Lu et al. 2021) learning the antiderivative operator
G(u)(y) = int_0^y u(s) ds from 100 sensor values of u (Gaussian-random-field inputs).

Mechanism: the user had tuned SGD + momentum at lr 0.01 for a run with one query point
per input function and then applied the linear lr-scaling rule, counting every
(function, query point) pair as a sample: with 24-40 query points per function the lr
became 0.3-0.8.  But the query points of one function share the same branch output, so
the gradient does not get less noisy by that factor -- it gets larger.  The first
momentum steps overshoot: the branch-trunk dot product grows by orders of magnitude per
step (loss 1e1 -> 1e5 -> 1e20 ...) and reaches inf/NaN within the first ten steps.
Update/weight ratios are far above 1e-3 from the first step.

ORIGIN is None: the optimiser step size, not a module, is at fault.

Fix: the tuned lr 0.01; model, momentum, data and batch layout unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Lu et al., DeepONet (Nat. Mach. Intell. 2021), antiderivative example (DeepXDE); "
          "Goyal et al. linear lr scaling rule misapplied to query points")


class DeepONet(nn.Module):
    def __init__(self, m, width, p, depth):
        super().__init__()
        def mlp(inp):
            layers = [nn.Linear(inp, width), nn.Tanh()]
            for _ in range(depth - 1):
                layers += [nn.Linear(width, width), nn.Tanh()]
            layers += [nn.Linear(width, p)]
            return nn.Sequential(*layers)
        self.branch = mlp(m)
        self.trunk = mlp(1)
        self.b0 = nn.Parameter(torch.zeros(1))

    def forward(self, u_sensors, y):
        b = self.branch(u_sensors)          # B,p
        t = self.trunk(y.unsqueeze(-1))     # B,Q,p
        return torch.einsum("bp,bqp->bq", b, t) + self.b0


def grf_samples(n, m_grid, g, length=0.2):
    x = torch.linspace(0, 1, m_grid)
    K = torch.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / length ** 2) + 1e-5 * torch.eye(m_grid)
    Lc = torch.linalg.cholesky(K)
    return (Lc @ torch.randn(m_grid, n, generator=g)).t(), x


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(width=40, p=40, depth=2, bs=64, q=32, steps=120, lr=0.5),
        dict(width=64, p=32, depth=3, bs=48, q=40, steps=100, lr=0.3),
        dict(width=48, p=48, depth=2, bs=96, q=24, steps=140, lr=0.8),
    ][seed % 3]
    lr = 0.01 if fixed else cfg["lr"]
    m = 100
    model = DeepONet(m, cfg["width"], cfg["p"], cfg["depth"])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = []
    for _ in range(cfg["steps"]):
        u, x = grf_samples(cfg["bs"], m, g)
        G = torch.cumsum(u, 1) / (m - 1) - u[:, :1] / (m - 1)        # antiderivative on grid
        idx = torch.randint(0, m, (cfg["bs"], cfg["q"]), generator=g)
        y = x[idx]
        target = torch.gather(G, 1, idx)
        batches.append(((u, y), target))

    def loss_fn(out, target):
        return F.mse_loss(out, target)

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
