"""Airfoil polar surrogate (CL, CD, CM from geometry + flow condition), deep ReLU MLP.

Mechanism: the surrogate replaces XFOIL/RANS look-ups inside a wing-sizing loop. Every Linear
layer is re-initialised with ``nn.init.normal_(w, 0.0, 0.01)`` (the "small Gaussian" recipe
copied from an old Caffe/TF1 config). With a width of 64-128 the per-layer gain is
0.01 * sqrt(width / 2) ~ 0.06-0.08, so the activation scale shrinks geometrically with depth
from step 0: after 8-10 layers the signal reaching the head is ~1e-10 of the input, and the
back-propagated gradients shrink the same way. Only the output bias learns, and since the
targets are standardised (zero mean) the loss stays at the target variance: a stall.

ORIGIN: ``net.0`` - the first Linear is where the geometric shrinkage starts; every following
layer only multiplies the same too-small gain.

Fix: Kaiming-normal (fan_in, relu) initialisation of the Linear weights, zero biases.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Known pattern: Caffe/TF1-style N(0, 0.01) weight init in deep plain ReLU MLPs makes "
          "activations and gradients vanish geometrically with depth (He et al. 2015, 'Delving "
          "deep into rectifiers', Sec. 2.2; airfoil-polar surrogate MLPs as in NACA/UIUC "
          "database regressions).")


def _polars(g, n):
    # features: alpha [deg], log10 Re, Mach, t/c, max camber, camber position
    alpha = torch.rand(n, generator=g) * 24 - 6
    logre = torch.rand(n, generator=g) * 2 + 5
    mach = torch.rand(n, generator=g) * 0.6
    tc = torch.rand(n, generator=g) * 0.12 + 0.06
    camber = torch.rand(n, generator=g) * 0.06
    pos = torch.rand(n, generator=g) * 0.4 + 0.2
    a = torch.deg2rad(alpha)
    beta = torch.sqrt(1 - mach ** 2)
    cl0 = 2 * math.pi * (a + 2 * camber) / beta
    stall = torch.tanh((alpha - 12 - 40 * tc) / 3).clamp_min(0)
    cl = cl0 * (1 - 0.6 * stall)
    cd = 0.006 + 0.01 * tc / 0.12 + 0.02 * (10 ** (5.5 - logre)) + 0.08 * cl ** 2 / (2 * math.pi) + 0.1 * stall
    cm = -0.25 * camber * 10 - 0.02 * (pos - 0.4) * cl
    x = torch.stack([(alpha - 6) / 7, (logre - 6) / 0.58, (mach - 0.3) / 0.17,
                     (tc - 0.12) / 0.035, (camber - 0.03) / 0.017, (pos - 0.4) / 0.115], 1)
    y = torch.stack([cl, cd * 20, cm * 5], 1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    depth = [8, 10, 9][seed % 3]
    width = [64, 128, 96][seed % 3]
    lr = [0.02, 0.01, 0.015][seed % 3]
    bs = [64, 96, 128][seed % 3]
    steps = 150

    layers, d = [], 6
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 3))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)

    x, y = _polars(g, bs * steps)
    mu, sd = y.mean(0), y.std(0)
    y = (y - mu) / sd
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
