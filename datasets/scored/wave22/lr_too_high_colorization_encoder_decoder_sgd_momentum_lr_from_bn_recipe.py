"""Automatic image colorization (grayscale L channel -> encoder/decoder CNN -> ab
chrominance, MSE regression as in the "Let there be color" / Zhang regression
baselines, LeakyReLU convs). The SGD settings (lr 0.4-0.8, momentum 0.9) were copied from the
BatchNorm version of the network, but this variant has no normalisation layers.

Mechanism: without BatchNorm the effective step on the raw conv weights is far too
large: the update/weight ratio of the first SGD steps is ~1e-1 instead of ~1e-3. Each
step overshoots the minimum along the sharpest directions, momentum accumulates the
overshoot, the loss oscillates with growing amplitude and after a few to a few tens
of steps the weights and the loss overflow to inf/NaN.

ORIGIN: ``enc.0`` - the first conv of the encoder; every layer is over-stepped, the
divergence is visible first in the input layer's update ratio.

Fix: an SGD lr suited to the un-normalised network (0.01-0.02); model, data and
momentum unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = "enc.0"
SOURCE = ("colorization re-implementations (Iizuka 2016 / Zhang 2016 regression "
          "baselines) that drop BatchNorm but keep the BN recipe's SGD lr; reports "
          "'loss explodes to nan after a few iterations'")


class ColorNet(nn.Module):
    def __init__(self, width):
        super().__init__()
        w = width
        self.enc = nn.Sequential(
            nn.Conv2d(1, w, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.LeakyReLU(0.2),
        )
        self.dec = nn.Sequential(
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(2 * w, w, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(w, 2, 3, padding=1),
        )

    def forward(self, L):
        return self.dec(self.enc(L))


def _lab_images(g, n, size):
    # synthetic scenes: chroma correlates with luminance structure (sky, foliage, ...)
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size),
                            indexing="ij")
    horizon = torch.rand(n, 1, 1, generator=g) * 0.4 + 0.3
    sky = (yy.unsqueeze(0) < horizon).float()
    tex = torch.sin(20 * xx.unsqueeze(0) * (torch.rand(n, 1, 1, generator=g) + 0.5)) * 0.1
    L = sky * (0.7 + 0.2 * yy) + (1 - sky) * (0.35 + tex)
    a = sky * -0.1 + (1 - sky) * (-0.35 + 0.5 * tex)
    b = sky * -0.4 + (1 - sky) * (0.3 + tex)
    L = L + 0.03 * torch.randn(n, size, size, generator=g)
    return (L - 0.5).unsqueeze(1), torch.stack([a, b], dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8000 + seed)
    width = [16, 12, 24][seed % 3]
    bs = [8, 12, 6][seed % 3]
    lr = [0.02, 0.02, 0.01][seed % 3] if fixed else [0.5, 0.8, 0.4][seed % 3]
    steps = 150
    model = ColorNet(width)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = []
    for _ in range(steps):
        L, ab = _lab_images(g, bs, 16)
        batches.append((L, ab))

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
