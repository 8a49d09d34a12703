"""VDSR-style residual super-resolution CNN (bicubic-upsampled luminance in, a stack
of 3x3 conv + ReLU, the network predicts the residual that is added to the input),
trained with Adam but with the paper's SGD learning rate (0.1, which VDSR only
survives thanks to its adjustable gradient clipping).

Mechanism: the first Adam steps move every weight and bias by ~lr = 0.1 regardless
of gradient size. Biases and filters of the hidden convs are pushed so far negative
that the pre-activations of (almost) every unit are < 0 for all input patches;
those ReLUs output 0 and pass 0 gradient, so they never recover. The residual branch
degenerates to a constant and the loss stays at the level of "bicubic + constant"
(the initial residual energy) for the rest of the run -> plateau.

ORIGIN: ``body.0`` - the first conv + ReLU of the residual branch, the first layer
whose units die and cut the gradient path to everything above it.

Fix: an Adam learning rate (8e-4 - 1.2e-3) instead of the SGD one; model, data and
schedule unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "body.0"
SOURCE = ("VDSR / SRCNN PyTorch ports that swap the paper's SGD (lr 0.1 + gradient "
          "clipping) for Adam but keep lr=0.1; forum reports 'SR output equals bicubic, "
          "all feature maps are zero'")


class VDSR(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = [nn.Conv2d(1, width, 3, padding=1), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(width, width, 3, padding=1), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.out = nn.Conv2d(width, 1, 3, padding=1)

    def forward(self, x):
        return x + self.out(self.body(x))


def _images(g, n, size):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size),
                            indexing="ij")
    img = 0.5 * torch.ones(n, 1, size, size)
    for _ in range(5):
        fx = (torch.rand(n, 1, 1, 1, generator=g) - 0.5) * 10
        fy = (torch.rand(n, 1, 1, 1, generator=g) - 0.5) * 10
        ph = torch.rand(n, 1, 1, 1, generator=g) * 6.28
        img = img + 0.1 * torch.sin(6.28 * (fx * xx + fy * yy) + ph)
    edge = (xx > torch.rand(n, 1, 1, 1, generator=g)).float() * 0.3
    return (img + edge - 0.15).clamp(0, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    width = [16, 24, 16][seed % 3]
    depth = [5, 6, 7][seed % 3]
    bs = [8, 6, 10][seed % 3]
    steps = 150
    lr = 1e-4 * [10, 8, 12][seed % 3] if fixed else [0.1, 0.08, 0.12][seed % 3]
    model = VDSR(width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for _ in range(steps):
        hr = _images(g, bs, 24)
        lr_img = F.interpolate(F.avg_pool2d(hr, 2), scale_factor=2, mode="bilinear",
                               align_corners=False)
        batches.append((lr_img, hr))

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
