"""Fourier-feature network (Tancik et al. 2020) fitting an RGB image: gamma(v) =
[cos(2 pi B v), sin(2 pi B v)] with Gaussian B, a ReLU MLP and a sigmoid RGB head.

Mechanism: the reference notebook trains with Adam at lr 1e-3.  The user found the
first hundred steps slow and raised the lr to 0.1-0.2.  Adam moves every weight by ~lr
per step while the weights themselves are ~0.05-0.1 (update/weight ratio ~1, three
orders of magnitude above the usual 1e-3): within the first two steps the hidden
activations and the logits of the sigmoid head are blown up to ~1e4, the head is
pushed into saturation on a wrong 0/1 pattern, and the MSE jumps from ~0.04 to ~0.25
and stays there (the saturated sigmoid passes no gradient to pull it back).

ORIGIN is None: the optimiser step size, not a module, is the root cause.

Fix: the notebook's Adam lr 1e-3; model, features, data unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Tancik et al., Fourier Features Let Networks Learn High Frequency Functions (2020), "
          "image regression demo (Adam lr 1e-3)")


class FourierFeatureINR(nn.Module):
    def __init__(self, n_freq, sigma, width, depth, seed):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("B", torch.randn(2, n_freq, generator=g) * sigma)
        layers = [nn.Linear(2 * n_freq, width), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers += [nn.Linear(width, 3)]
        self.mlp = nn.Sequential(*layers)

    def forward(self, v):
        proj = 2 * math.pi * v @ self.B
        feats = torch.cat([torch.cos(proj), torch.sin(proj)], -1)
        return torch.sigmoid(self.mlp(feats))


def make_image(res, seed):
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.linspace(0, 1, res), torch.linspace(0, 1, res), indexing="ij")
    img = []
    for c in range(3):
        f = torch.randint(2, 6, (2,), generator=g).float()
        ph = torch.rand(2, generator=g) * 6.28
        ch = 0.5 + 0.35 * torch.sin(2 * math.pi * f[0] * xx + ph[0]) * torch.cos(2 * math.pi * f[1] * yy + ph[1])
        disc = ((xx - 0.4 - 0.1 * c) ** 2 + (yy - 0.55) ** 2 < 0.06).float()
        ch = ch * (1 - disc) + disc * (0.1 + 0.4 * c)
        img.append(ch.clamp(0, 1))
    coords = torch.stack([xx, yy], -1).reshape(-1, 2)
    return coords, torch.stack(img, -1).reshape(-1, 3)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(res=32, n_freq=64, sigma=6.0, width=128, depth=3, lr=1e-1, bs=512, steps=120),
        dict(res=28, n_freq=96, sigma=8.0, width=96, depth=4, lr=1.5e-1, bs=392, steps=100),
        dict(res=36, n_freq=48, sigma=5.0, width=160, depth=3, lr=2e-1, bs=648, steps=140),
    ][seed % 3]
    lr = 1e-3 if fixed else cfg["lr"]
    model = FourierFeatureINR(cfg["n_freq"], cfg["sigma"], cfg["width"], cfg["depth"], seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    coords, rgb = make_image(cfg["res"], seed)
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randperm(coords.shape[0], generator=g)[: cfg["bs"]]
        batches.append((coords[idx], rgb[idx]))

    def loss_fn(out, target):
        return F.mse_loss(out, target)

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
