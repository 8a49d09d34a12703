"""Deep residual forward-dynamics MLP (MBRL / PETS-style one-step model) for a cart-pole.

Mechanism: the user initialises every nn.Linear with ``nn.init.normal_(w, mean=0, std=1)``
("like the TF tutorial") instead of a fan-in scaled init.  Each Linear multiplies the activation
norm by ~sqrt(fan_in) (~8-11x) and every residual block adds such a branch, so the hidden state
grows geometrically with depth from step 0; the predicted state deltas are ~1e6-1e10, the MSE is
~1e13-1e19 and the first SGD step (gradients of the same size) throws the weights to
inf/NaN.

ORIGIN: ``inp`` -- the input projection is the first badly initialised layer where the
explosion starts; every residual block compounds it.
Fix: PyTorch's default (kaiming-uniform, fan-in scaled) init -- the normal_(std=1) loop is removed
(fixed=True).  Same data, depth, optimiser and lr.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "inp"
SOURCE = ("Residual MLP dynamics models in MBRL codebases (e.g. mbrl-lib / PETS); recurring forum "
          "reports of 'loss is 1e20 then nan at step 1' after init.normal_(w) with default std=1.")


class ResBlock(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.fc1 = nn.Linear(h, h)
        self.fc2 = nn.Linear(h, h)

    def forward(self, x):
        return x + self.fc2(F.relu(self.fc1(x)))


class ResDynamics(nn.Module):
    def __init__(self, sdim, adim, h, nblocks):
        super().__init__()
        self.inp = nn.Linear(sdim + adim, h)
        self.blocks = nn.Sequential(*[ResBlock(h) for _ in range(nblocks)])
        self.out = nn.Linear(h, sdim)

    def forward(self, s, a):
        return self.out(self.blocks(F.relu(self.inp(torch.cat([s, a], -1)))))


def cartpole_delta(s, a, dt=0.02):
    x, xd, th, thd = s.unbind(-1)
    f = 10.0 * a[..., 0]
    mc, mp, l, gr = 1.0, 0.1, 0.5, 9.8
    st, ct = torch.sin(th), torch.cos(th)
    tmp = (f + mp * l * thd ** 2 * st) / (mc + mp)
    thacc = (gr * st - ct * tmp) / (l * (4.0 / 3.0 - mp * ct ** 2 / (mc + mp)))
    xacc = tmp - mp * l * thacc * ct / (mc + mp)
    return torch.stack([xd * dt, xacc * dt, thd * dt, thacc * dt], -1) / dt  # rates


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=64, nb=4, lr=1e-3, bs=64, steps=120),
           dict(h=96, nb=3, lr=5e-4, bs=32, steps=100),
           dict(h=48, nb=6, lr=2e-3, bs=128, steps=140)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 7)
    model = ResDynamics(4, 1, cfg["h"], cfg["nb"])
    if not fixed:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, 1.0)
                nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = []
    for _ in range(cfg["steps"]):
        s = torch.randn(cfg["bs"], 4, generator=g) * torch.tensor([1.0, 1.0, 0.3, 1.0])
        a = torch.rand(cfg["bs"], 1, generator=g) * 2 - 1
        batches.append(((s, a), cartpole_delta(s, a)))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
