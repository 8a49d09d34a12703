"""ReLU MLP NARX surrogate of the quadruple-tank process, trained to be used inside a
model-predictive controller.

Mechanism: the surrogate maps an 8-step history of min-max scaled tank levels and pump
voltages (48 inputs, all in [0, 1]) to the standardised level change of the next step.
The user tuned SGD+momentum at lr 0.3-0.5 on a one-step (6-input) version of the model
and kept that lr when the history window was widened to 8 steps.  Because every input
is non-negative, the first-layer gradient of a unit is delta_j * x with x >= 0 for every
sample, so one SGD step moves that unit's pre-activation by about -lr * delta_j * |x|^2,
and |x|^2 grew eight-fold with the window.  Within the first few momentum steps the
overshoot drives the pre-activations of practically every first- and second-layer ReLU
negative for every input; the network outputs a constant, the ReLUs pass no gradient and
the loss sits at the variance of the standardised targets for the rest of the run.

ORIGIN is net.1, the first ReLU: its units die first and cut the gradient to everything
below the output bias.

Fix: a lr suited to the 48-input model (0.03); model, data, momentum unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("Johansson quadruple-tank benchmark; learned one-step dynamics surrogates for MPC "
          "(e.g. do-mpc / neural-network MPC tutorials) trained with SGD")


class TankSurrogate(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = [nn.Linear(6 * 8, width), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers += [nn.Linear(width, 4)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def tank_step(h, v, dt=2.0):
    # Johansson (2000) parameters, levels in cm, pump voltages in V
    A = torch.tensor([28., 32., 28., 32.])
    a = torch.tensor([0.071, 0.057, 0.071, 0.057])
    k1, k2, g1, g2, g = 3.33, 3.35, 0.7, 0.6, 981.
    out = a * torch.sqrt(2 * g * h.clamp(min=0))
    inflow = torch.stack([
        g1 * k1 * v[:, 0], g2 * k2 * v[:, 1],
        (1 - g2) * k2 * v[:, 1], (1 - g1) * k1 * v[:, 0]], 1)
    dh = (-out + torch.cat([out[:, 2:3], out[:, 3:4], torch.zeros_like(out[:, :2])], 1) + inflow) / A
    return (h + dt * dh).clamp(min=0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(width=64, depth=2, lr=0.5, bs=64, steps=150),
        dict(width=128, depth=2, lr=0.3, bs=32, steps=120),
        dict(width=48, depth=3, lr=0.4, bs=96, steps=160),
    ][seed % 3]
    lr = 0.03 if fixed else cfg["lr"]
    model = TankSurrogate(cfg["width"], cfg["depth"])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    h_max, v_max = 20.0, 6.0
    raw = []
    for _ in range(cfg["steps"]):
        h = torch.rand(cfg["bs"], 4, generator=g) * 14 + 3
        hist = []
        for k in range(8):
            v = (torch.rand(cfg["bs"], 2, generator=g) * 0.5 + 0.5) * v_max
            hist.append(torch.cat([h / h_max, v / v_max], 1))   # min-max scaled to [0, 1]
            h = tank_step(h, v)
        x = torch.cat(hist, 1)
        raw.append((x, h - hist[-1][:, :4] * h_max))   # target: level change over one step
    # standardise the level-change targets with dataset statistics
    all_dy = torch.cat([d for _, d in raw])
    mu, sd = all_dy.mean(0), all_dy.std(0)
    batches = [(x, (d - mu) / sd) for x, d in raw]

    def loss_fn(out, target):
        return F.mse_loss(out, target)

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
