"""Explicit (approximate) MPC: an MLP policy imitating the torques of an MPC controller for a
2-link arm (state: joint angles/velocities + target) -- 'learning the MPC law' for fast on-board
inference.  Output layer: tanh, because the MPC respects actuator limits.

Mechanism: the tanh output is meant to be multiplied by the torque limit (u_max = 80 N m), but
the user forgot the scale: the policy returns tanh(.) in [-1, 1] while the MPC targets are in
N m with typical magnitudes 20-80.  To reduce the MSE the network drives the pre-activations of
the output tanh towards +-inf; the tanh saturates at +-1, its derivative 1 - tanh^2 -> 0
cuts the gradient to the whole network, and the loss stalls at roughly E[(|u|-1)^2], barely
below E[u^2].

ORIGIN: ``out_act`` -- the output Tanh is the unit that saturates.
Fix: ``u_max * tanh(.)`` (fixed=True), the output is scaled to the actuator range so the
pre-activations stay O(1).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = ("Approximate/explicit MPC imitation (e.g. Karg & Lucia 2020, Chen et al. 2018 'Approximating "
          "explicit MPC using constrained neural networks'); tanh-bounded policies without action rescaling.")

U_MAX = 80.0


class MPCPolicy(nn.Module):
    def __init__(self, h, depth, scale):
        super().__init__()
        layers, d = [], 6
        for _ in range(depth):
            layers += [nn.Linear(d, h), nn.ELU()]
            d = h
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(d, 2)
        self.out_act = nn.Tanh()
        self.scale = scale

    def forward(self, x):
        return self.scale * self.out_act(self.out(self.body(x)))


def mpc_torque(x):
    q, qd, qt = x[:, 0:2], x[:, 2:4], x[:, 4:6]
    # gravity compensation + PD toward target, clipped at the actuator limit (MPC solution proxy)
    grav = torch.stack([45.0 * torch.cos(q[:, 0]) + 12.0 * torch.cos(q[:, 0] + q[:, 1]),
                        12.0 * torch.cos(q[:, 0] + q[:, 1])], -1)
    u = grav + 60.0 * (qt - q) - 8.0 * qd
    return u.clamp(-U_MAX, U_MAX)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=64, depth=2, lr=1e-3, bs=64, steps=150),
           dict(h=128, depth=3, lr=5e-4, bs=32, steps=120),
           dict(h=48, depth=2, lr=2e-3, bs=128, steps=180)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 81)
    model = MPCPolicy(cfg["h"], cfg["depth"], U_MAX if fixed else 1.0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for _ in range(cfg["steps"]):
        q = (torch.rand(cfg["bs"], 2, generator=g) * 2 - 1) * 1.2
        qd = torch.randn(cfg["bs"], 2, generator=g)
        qt = q + (torch.rand(cfg["bs"], 2, generator=g) * 2 - 1) * 0.8
        x = torch.cat([q, qd, qt], -1)
        batches.append((x, mpc_torque(x)))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
