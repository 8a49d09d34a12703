"""SIREN implicit image representation (coordinates -> sine-activated MLP with
omega_0 = 30 and the SIREN uniform init -> RGB), fitted with Adam at an lr of order
1e-2 (2e-2..5e-2 per seed; the values people use for hash-grid / ReLU coordinate
MLPs) instead of SIREN's 1e-4.

Mechanism: in a SIREN every hidden pre-activation is multiplied by omega_0 = 30, so
a weight step of size lr changes the sine arguments by ~30*lr*fan_in-scaled amounts.
At lr ~1e-2 each Adam update shifts the phases of the sine units by a sizeable
fraction of a period; the update/weight ratio is >1e-1 instead of ~1e-3, the fitted
function is re-scrambled every step and the reconstruction MSE bounces around the
level of predicting noise instead of decreasing (bounded activations, so no NaN:
the run just never converges).

ORIGIN: ``net.0`` - the first sine layer (``first_omega_0 * W x``), where the oversized
update has the largest effect on every downstream phase.

Fix: SIREN's lr (1e-4 scale, varied per seed); model, init and data unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = "net.0"
SOURCE = ("Sitzmann et al. 2020 SIREN (lr 1e-4 for image fitting); GitHub issues on "
          "siren-pytorch / implicit representation repos 'loss does not decrease, output "
          "is noise' when using lr 1e-3..1e-2")


class SineLayer(nn.Module):
    def __init__(self, cin, cout, omega, first):
        super().__init__()
        self.omega = omega
        self.linear = nn.Linear(cin, cout)
        bound = 1.0 / cin if first else math.sqrt(6.0 / cin) / omega
        with torch.no_grad():
            self.linear.weight.uniform_(-bound, bound)

    def forward(self, x):
        return torch.sin(self.omega * self.linear(x))


class Siren(nn.Module):
    def __init__(self, width, depth, omega=30.0):
        super().__init__()
        layers = [SineLayer(2, width, omega, True)]
        for _ in range(depth - 1):
            layers.append(SineLayer(width, width, omega, False))
        self.net = nn.Sequential(*layers)
        self.out = nn.Linear(width, 3)
        bound = math.sqrt(6.0 / width) / omega
        with torch.no_grad():
            self.out.weight.uniform_(-bound, bound)

    def forward(self, coords):
        return self.out(self.net(coords))


def _image(g, size):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size),
                            indexing="ij")
    img = torch.zeros(3, size, size)
    for _ in range(6):
        c = torch.rand(3, 1, 1, generator=g) - 0.5
        cx, cy = (torch.rand(2, generator=g) * 2 - 1).tolist()
        s = float(torch.rand(1, generator=g)) * 0.3 + 0.1
        img = img + c * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * s * s))
    f = float(torch.rand(1, generator=g)) * 4 + 2
    img = img + 0.2 * torch.sin(f * math.pi * xx) * torch.cos(f * math.pi * yy)
    img = img - img.mean(dim=(1, 2), keepdim=True)      # SIREN-style centred targets
    return img, torch.stack([xx, yy], dim=-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    width = [80, 96, 48][seed % 3]
    depth = [4, 3, 4][seed % 3]
    n_pix = [512, 384, 640][seed % 3]
    lr = [1e-4, 1.5e-4, 2e-4][seed % 3] if fixed else [5e-2, 2e-2, 2.5e-2][seed % 3]
    steps = 200
    size = 32
    img, grid = _image(g, size)
    coords = grid.reshape(-1, 2)
    rgb = img.permute(1, 2, 0).reshape(-1, 3)
    model = Siren(width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for _ in range(steps):
        idx = torch.randperm(coords.shape[0], generator=g)[:n_pix]
        batches.append((coords[idx], rgb[idx]))

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
