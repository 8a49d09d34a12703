"""PINN inverse problem: recover the thermal diffusivity of a rod from thermocouple data.

Mechanism: a tanh PINN u(x, t) is trained on the 1-D heat equation residual
u_t - kappa * u_xx = 0 (autograd derivatives on collocation points) plus a data term on
thermocouple readings; kappa is a learnable log-parameter (Raissi-style inverse PINN).
The readings are streamed from a data logger in shards.  In one shard a thermocouple
dropped out and the logger wrote NaN for its reading (the usual "sensor disconnected"
fill value after a CSV -> float conversion).  The NaN target enters the data MSE, the
loss is NaN at that step and the backward pass writes NaN into every weight and into
log_kappa, so every later step is NaN too.

ORIGIN is None: the failure is caused by one corrupt batch of data, not by a module.

Fix: filter the non-finite readings out of the shard (torch.isfinite mask) before it is
used; everything else (model, optimiser, lr, collocation points, schedule) is unchanged.
"""
import math

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Raissi et al. inverse PINN (identify PDE coefficient from sparse data); common "
          "report of PINN loss turning NaN mid-training because a sensor CSV contained "
          "NaN/blank readings that were not dropped")


class HeatPINN(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = [nn.Linear(2, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        layers += [nn.Linear(width, 1)]
        self.net = nn.Sequential(*layers)
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)
        self.log_kappa = nn.Parameter(torch.tensor(math.log(0.5)))

    def forward(self, xt_col, xt_obs):
        xt_col = xt_col.clone().requires_grad_(True)
        u = self.net(xt_col)
        du = torch.autograd.grad(u.sum(), xt_col, create_graph=True)[0]
        u_x, u_t = du[:, :1], du[:, 1:]
        u_xx = torch.autograd.grad(u_x.sum(), xt_col, create_graph=True)[0][:, :1]
        residual = u_t - torch.exp(self.log_kappa) * u_xx
        u_obs = self.net(xt_obs)
        return residual, u_obs


def exact(x, t, kappa):
    return torch.exp(-kappa * math.pi ** 2 * t) * torch.sin(math.pi * x) \
        + 0.5 * torch.exp(-4 * kappa * math.pi ** 2 * t) * torch.sin(2 * math.pi * x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    cfg = [
        dict(width=32, depth=3, lr=2e-3, n_col=256, n_obs=64, steps=120, bad=37),
        dict(width=48, depth=4, lr=1e-3, n_col=192, n_obs=96, steps=100, bad=58),
        dict(width=24, depth=3, lr=3e-3, n_col=320, n_obs=48, steps=140, bad=81),
    ][seed % 3]
    kappa_true = 0.1
    model = HeatPINN(cfg["width"], cfg["depth"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    # fixed thermocouple positions, readings at logger times
    sensors = torch.linspace(0.05, 0.95, 12)
    batches = []
    for step in range(cfg["steps"]):
        xt_col = torch.rand(cfg["n_col"], 2, generator=g)
        xt_col[:, 1] *= 0.5  # t in [0, 0.5]
        idx = torch.randint(0, len(sensors), (cfg["n_obs"],), generator=g)
        xs = sensors[idx]
        ts = torch.rand(cfg["n_obs"], generator=g) * 0.5
        xt_obs = torch.stack([xs, ts], 1)
        u = exact(xs, ts, kappa_true) + 0.01 * torch.randn(cfg["n_obs"], generator=g)
        u = u.unsqueeze(1)
        if step == cfg["bad"]:
            # thermocouple #k disconnected: the logger wrote NaN for all its readings
            dead = sensors[int(torch.randint(0, len(sensors), (1,), generator=g))]
            mask_dead = (xs == dead)
            if not bool(mask_dead.any()):
                mask_dead[0] = True
            u[mask_dead] = float("nan")
            if fixed:
                keep = torch.isfinite(u[:, 0])
                xt_obs, u = xt_obs[keep], u[keep]
        batches.append(((xt_col, xt_obs), u))

    def loss_fn(out, target):
        residual, u_obs = out
        return (residual ** 2).mean() + ((u_obs - target) ** 2).mean()

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
