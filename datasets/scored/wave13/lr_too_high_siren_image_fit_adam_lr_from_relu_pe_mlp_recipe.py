"""SIREN (sine-activated coordinate MLP, omega_0 = 30, paper initialisation)
fitting a 2-D image from pixel coordinates, trained with Adam at the lr used
for the ReLU + positional-encoding MLP it replaced (5e-3 .. 3e-2).

Mechanism: a SIREN's first layer multiplies its pre-activation by
omega_0 = 30 and the hidden layers are initialised so that every unit sits in
the well-conditioned part of sin().  The network is therefore extremely
sensitive to weight changes: an Adam step of 1e-2 on a first-layer weight
moves the phase of that unit by ~0.3 rad *per unit of input*, and a hidden
weight step of 1e-2 is as large as the whole init range of those weights
(sqrt(6/n)/30 ~ 0.008-0.012 here), then multiplied by omega_0 again in the
forward pass.  The update/weight ratio is ~0.5-3 instead of ~1e-3: phases are scrambled on every step, the represented signal becomes
high-frequency noise and the reconstruction MSE stays at (or returns to) the
variance of the image instead of dropping by an order of magnitude (at the
lowest of these lrs the loss first dips, then climbs back as the phases
drift).

ORIGIN: None -- a global optimiser setting; every layer is over-stepped.

Fix: the SIREN paper's Adam lr of 1e-4.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("SIREN (Sitzmann et al., NeurIPS 2020) explore_siren notebook (Adam lr 1e-4); issues "
          "'SIREN does not converge / outputs noise' when the learning rate of a ReLU-PE baseline "
          "(1e-2..1e-3) is reused")


class SineLayer(nn.Module):
    def __init__(self, d_in, d_out, omega_0, is_first):
        super().__init__()
        self.omega_0 = omega_0
        self.linear = nn.Linear(d_in, d_out)
        with torch.no_grad():
            bound = 1 / d_in if is_first else math.sqrt(6 / d_in) / omega_0
            self.linear.weight.uniform_(-bound, bound)

    def forward(self, x):
        return torch.sin(self.omega_0 * self.linear(x))


class Siren(nn.Module):
    def __init__(self, width, depth, omega_0=30.0):
        super().__init__()
        layers = [SineLayer(2, width, omega_0, True)]
        layers += [SineLayer(width, width, omega_0, False) for _ in range(depth - 1)]
        self.net = nn.Sequential(*layers)
        self.out = nn.Linear(width, 1)
        with torch.no_grad():
            b = math.sqrt(6 / width) / omega_0
            self.out.weight.uniform_(-b, b)

    def forward(self, coords):
        return self.out(self.net(coords)).squeeze(-1)


def make_image(res, g):
    ax = torch.linspace(-1, 1, res)
    yy, xx = torch.meshgrid(ax, ax, indexing="ij")
    img = torch.zeros(res, res)
    for _ in range(6):  # smooth blobs + a few edges, like a small natural image
        c = torch.rand(2, generator=g) * 2 - 1
        s = 0.1 + 0.4 * torch.rand(1, generator=g)
        img += (torch.rand(1, generator=g) - 0.5) * 2 * torch.exp(-((xx - c[0]) ** 2 + (yy - c[1]) ** 2) / s ** 2)
    img += 0.5 * (torch.sin(6 * xx + 3 * yy) > 0.3).float()
    img = (img - img.mean()) / img.std()
    coords = torch.stack([xx, yy], dim=-1).reshape(-1, 2)
    return coords, img.reshape(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=64, depth=3, res=40, bs=800, lr=1e-2),
        dict(width=96, depth=2, res=48, bs=1024, lr=3e-2),
        dict(width=48, depth=4, res=32, bs=600, lr=5e-3),
    ][seed % 3]
    g = torch.Generator().manual_seed(13000 + seed)
    steps = 150
    coords, pix = make_image(cfg["res"], g)
    batches = []
    for _ in range(steps):
        idx = torch.randperm(coords.size(0), generator=g)[: cfg["bs"]]
        batches.append((coords[idx], pix[idx]))

    torch.manual_seed(seed)
    model = Siren(cfg["width"], cfg["depth"])
    lr = 1e-4 if fixed else cfg["lr"]
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
