"""Hamiltonian neural network on logged pendulum trajectories, derivative targets from
finite differences of the log.

Mechanism: an HNN (Greydanus et al. 2019) learns a scalar H_theta(q, p); the model
returns the symplectic gradient (dH/dp, -dH/dq), regressed on time derivatives that the
user estimated by finite differences of the logged states, (x[i+1] - x[i]) / (t[i+1] - t[i]).
In one early shard the logger's clock glitched: a few samples carry a timestamp only
1 microsecond after the previous one although the state moved a full sample period.
Those rows get derivative targets ~10^5 times too large.  The loss at that step is ~10^9
times the normal value (finite), and Adam's second-moment estimate absorbs the squared
10^5-times gradient: for the rest of the run sqrt(v) stays thousands of times larger than
the normal gradients, the effective step collapses and the loss freezes at its early
level (beta2 = 0.999 needs thousands of steps to forget it).

ORIGIN is None: a few corrupt rows of data, not a module, start the failure.

Fix: drop the rows whose time step is implausibly small (dt < 0.5 * median dt) before
computing the finite-difference targets of that shard; nothing else changes.
"""
import math

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Greydanus et al., Hamiltonian Neural Networks (pendulum task, finite-difference "
          "derivative targets); known Adam failure mode where one extreme-gradient batch "
          "inflates the second moment and freezes training")


class HNN(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = [nn.Linear(2, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        layers += [nn.Linear(width, 1, bias=False)]
        self.h_net = nn.Sequential(*layers)

    def forward(self, x):
        x = x.clone().requires_grad_(True)
        H = self.h_net(x)
        dH = torch.autograd.grad(H.sum(), x, create_graph=True)[0]
        dq_dt = dH[:, 1:2]
        dp_dt = -dH[:, 0:1]
        return torch.cat([dq_dt, dp_dt], 1)


def pendulum_rhs(z):
    # H = 3 (1 - cos q) + p^2   (HNN paper's ideal pendulum)
    q, p = z[..., 0], z[..., 1]
    return torch.stack([2 * p, -3 * torch.sin(q)], -1)


def simulate(z0, times):
    out = [z0]
    z = z0
    for i in range(len(times) - 1):
        h = float(times[i + 1] - times[i])
        k1 = pendulum_rhs(z)
        k2 = pendulum_rhs(z + 0.5 * h * k1)
        k3 = pendulum_rhs(z + 0.5 * h * k2)
        k4 = pendulum_rhs(z + h * k3)
        z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(z)
    return torch.stack(out)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    cfg = [
        dict(width=64, depth=2, lr=1e-3, bs=64, steps=150, bad=3),
        dict(width=96, depth=3, lr=5e-4, bs=96, steps=120, bad=2),
        dict(width=48, depth=2, lr=2e-3, bs=48, steps=180, bad=4),
    ][seed % 3]
    model = HNN(cfg["width"], cfg["depth"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    period = 0.05
    batches = []
    for step in range(cfg["steps"]):
        # each shard: 4 logged trajectories, jittered timestamps, noisy encoder readings
        xs, ys = [], []
        for j in range(4):
            n = cfg["bs"] // 4 + 1
            times = torch.cumsum(period * (1 + 0.1 * (torch.rand(n, generator=g) - 0.5)), 0)
            energy = 1.0 + 2.0 * torch.rand(1, generator=g)
            q0 = torch.acos(1 - energy / 3) * (2 * torch.rand(1, generator=g) - 1)
            z0 = torch.cat([q0, torch.sqrt(torch.clamp(energy - 3 * (1 - torch.cos(q0)), min=0))])
            states = simulate(z0, times) + 0.005 * torch.randn(n, 2, generator=g)
            if step == cfg["bad"] and j == 0:
                # clock glitch: a few samples stamped 1 us after their predecessor
                idx = torch.randperm(n - 1, generator=g)[:3] + 1
                times = times.clone()
                times[idx] = times[idx - 1] + 1e-6
            dt = times[1:] - times[:-1]
            x = states[:-1]
            y = (states[1:] - states[:-1]) / dt.unsqueeze(1)
            if fixed and step == cfg["bad"]:
                keep = dt > 0.5 * dt.median()
                x, y = x[keep], y[keep]
            xs.append(x)
            ys.append(y)
        batches.append((torch.cat(xs), torch.cat(ys)))

    def loss_fn(out, target):
        return ((out - target) ** 2).mean()

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
