"""Healthy: system identification through a differentiable simulator.  A chain of point masses
connected by springs/dampers (a soft-robot / cable model) is rolled out with semi-implicit Euler
for 40-60 steps in PyTorch; the unknown log-stiffnesses, log-dampings and a small MLP for an
unmodelled drag force are fitted by backpropagating the trajectory MSE through the whole
rollout (Adam).

Why it looks alarming: the backward pass goes through a 40-60 step unrolled loop (a very
deep graph through a stiff system, spring constants 20-50 vs an initial guess of 8), the
absolute loss is tiny from the start (~1e-2 m^2) and the gradients are ~1e-3..1e-2, which
looks like a vanishing-gradient run.  Adam's
per-parameter normalisation keeps the updates ~lr, dt is well inside the stability limit of
the stiffest spring, and the loss falls by 2-3 orders of magnitude: nothing is wrong.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Differentiable-physics system identification (DiffTaichi / Warp / Brax mass-spring "
          "examples); large but stable rollout gradients handled by Adam.")


class MassSpringSim(nn.Module):
    def __init__(self, n, dt, steps, k0, c0):
        super().__init__()
        self.n, self.dt, self.steps = n, dt, steps
        self.log_k = nn.Parameter(torch.full((n,), float(k0)).log())
        self.log_c = nn.Parameter(torch.full((n,), float(c0)).log())
        self.drag = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x0, v0, u):                       # x0, v0: B x n ; u: B x steps (tip force)
        k, c = self.log_k.exp(), self.log_c.exp()
        x, v, traj = x0, v0, []
        for t in range(self.steps):
            xl = F.pad(x, (1, 0))[:, :-1]               # left neighbour (wall at 0)
            vl = F.pad(v, (1, 0))[:, :-1]
            ext = x - xl
            f_left = -(k * ext + c * (v - vl))
            f_right = -F.pad(f_left[:, 1:], (0, 1))
            f = f_left + f_right
            f = f + F.pad(u[:, t:t + 1], (self.n - 1, 0))
            f = f - self.drag(v.reshape(-1, 1)).view_as(v) * 0.1
            v = v + self.dt * f
            x = x + self.dt * v
            traj.append(x)
        return torch.stack(traj, 1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=3, steps=50, lr=0.05, bs=8, iters=80),
           dict(n=4, steps=40, lr=0.03, bs=4, iters=70),
           dict(n=2, steps=60, lr=0.05, bs=16, iters=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 111)
    n, dt = cfg["n"], 0.02
    true = MassSpringSim(n, dt, cfg["steps"], 1.0, 1.0)
    with torch.no_grad():
        true.log_k.copy_(torch.log(20 + 30 * torch.rand(n, generator=g)))
        true.log_c.copy_(torch.log(0.3 + 0.5 * torch.rand(n, generator=g)))
        for p in true.drag.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    model = MassSpringSim(n, dt, cfg["steps"], 8.0, 1.0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for _ in range(cfg["iters"]):
        x0 = torch.randn(cfg["bs"], n, generator=g) * 0.2
        v0 = torch.randn(cfg["bs"], n, generator=g) * 0.5
        u = torch.randn(cfg["bs"], cfg["steps"], generator=g) * 2.0
        with torch.no_grad():
            y = true(x0, v0, u) + 0.002 * torch.randn(cfg["bs"], cfg["steps"], n, generator=g)
        batches.append(((x0, v0, u), y))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["iters"])
