"""Lambert-transfer delta-v surrogate for mission-design porkchop sweeps (SiLU MLP, SGD).

Mechanism: a trajectory-design team replaces thousands of Lambert solves in a launch-window
(porkchop) sweep with an MLP that maps departure/arrival orbit elements and time of flight
(standardised) to the total impulsive delta-v (standardised log km/s) and the C3. The
optimiser is SGD with Nesterov momentum; lr 0.5-0.8 was carried over from a BatchNorm image
classifier recipe. With momentum 0.9 the effective step is ~10x lr, far above what this
un-normalised MLP tolerates: the update/weight ratio is ~1 from the first steps, the loss
oscillates with growing amplitude and overflows to inf/NaN within a few dozen steps.

ORIGIN: None - an over-large learning rate acts on every parameter at once; no single module
is where it starts.

Fix: lr 0.02 (same optimiser, momentum, model and data).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Known pattern: learning rate copied from a BatchNorm/ResNet SGD recipe diverges an "
          "un-normalised regression MLP; neural Lambert/porkchop delta-v surrogates for "
          "preliminary mission design (e.g. asteroid-tour and GTOC transfer-cost regressors).")

MU = 1.0  # canonical units


def _transfers(g, n):
    r1 = 1.0 + 0.6 * torch.rand(n, generator=g)
    r2 = 1.0 + 2.5 * torch.rand(n, generator=g)
    dnu = math.pi * (0.2 + 1.6 * torch.rand(n, generator=g))
    tof = (0.3 + 1.4 * torch.rand(n, generator=g)) * math.pi * ((r1 + r2) / 2) ** 1.5
    inc = 0.2 * torch.rand(n, generator=g)
    # Hohmann-like reference with penalties for off-optimal transfer angle / time of flight
    a_t = (r1 + r2) / 2
    dv1 = (torch.sqrt(MU / r1) * (torch.sqrt(2 * r2 / (r1 + r2)) - 1)).abs()
    dv2 = (torch.sqrt(MU / r2) * (1 - torch.sqrt(2 * r1 / (r1 + r2)))).abs()
    t_h = math.pi * a_t ** 1.5
    pen = 0.3 * ((dnu - math.pi) / math.pi) ** 2 + 0.25 * torch.log(tof / t_h) ** 2
    dv = dv1 + dv2 + pen + 2 * torch.sqrt(MU / r2) * torch.sin(inc / 2)
    c3 = (dv1 + torch.sqrt(MU / r1)) ** 2 - 2 * MU / r1
    x = torch.stack([r1, r2, torch.cos(dnu), torch.sin(dnu), torch.log(tof), inc], 1)
    y = torch.stack([torch.log(dv), c3], 1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(314 + seed)
    width = [128, 96, 192][seed % 3]
    depth = [3, 4, 3][seed % 3]
    lr_bad = [0.5, 0.8, 0.6][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 150
    x, y = _transfers(g, bs * steps)
    x = (x - x.mean(0)) / x.std(0)
    y = (y - y.mean(0)) / y.std(0)
    layers, d = [], 6
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.SiLU()]
        d = width
    layers.append(nn.Linear(d, 2))
    model = nn.Sequential(*layers)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else lr_bad, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
