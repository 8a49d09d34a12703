"""PCPNet-style local patch regressor (shared point MLP + max pool + MLP head, no normalisation
layers) predicting the standardised absolute curvature of a surface patch from its k nearest
points.

Mechanism: the training script was first used for PCPNet's normal-estimation target, trained
with the 1 - |cos| loss of unit normals, whose gradients are small and bounded; the lr 0.1-0.15
(SGD, momentum 0.9) was tuned there.  Switching the same script to the curvature target (MSE on
standardised curvature, gradients several times larger) kept that lr.  The first
momentum-amplified updates are now far too large for the head: they push the pre-activations
of its narrow second ReLU layer (fed by head.2) below zero for every patch, one unit after
another, and a unit that is negative for every input gets exactly zero gradient and never comes
back.  Within a few dozen steps that layer is entirely silent, the prediction is the output
bias alone, and the MSE sits at the variance of the standardised targets (about 1) for the rest
of the run (a stall, nothing non-finite).

ORIGIN: "head.2", the Linear whose ReLU units (head.3) all end up silent: that layer is the
narrowest and dies first and completely, cutting the point encoder off from the loss.

Fix: an lr suited to the curvature loss (0.1x, i.e. 0.01-0.015); architecture, data, momentum
and steps unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.2"
SOURCE = ("Guerrero et al., PCPNet (Eurographics 2018) PointNet-style patch encoder for normals "
          "and curvatures; an lr tuned on one target/loss reused for another with larger "
          "gradients; dying ReLU under large updates (Lu et al. 2019; CS231n notes)")


class PCPNetLite(nn.Module):
    def __init__(self, width):
        super().__init__()
        act = nn.ReLU
        self.point_mlp = nn.Sequential(nn.Linear(3, width), act(), nn.Linear(width, width), act())
        self.head = nn.Sequential(nn.Linear(width, width), act(), nn.Linear(width, width // 2),
                                  act(), nn.Linear(width // 2, 1))

    def forward(self, pts):
        f = self.point_mlp(pts).max(dim=1).values
        return self.head(f).squeeze(-1)


def _patches(g, n, k):
    a = 0.2 + 1.8 * torch.rand(n, 1, generator=g)
    b = (torch.rand(n, 1, generator=g) * 2 - 1) * 1.5
    xy = torch.rand(n, k, 2, generator=g) * 2 - 1
    z = a * xy[..., 0] ** 2 + b * xy[..., 1] ** 2
    pts = torch.cat([xy, z[..., None]], -1)
    pts = pts + 0.005 * torch.randn(pts.shape, generator=g)
    ang = torch.rand(n, generator=g) * 2 * math.pi                # random rotation about z
    c, s = ang.cos(), ang.sin()
    rot = torch.stack([torch.stack([c, -s, torch.zeros_like(c)], -1),
                       torch.stack([s, c, torch.zeros_like(c)], -1),
                       torch.stack([torch.zeros_like(c), torch.zeros_like(c),
                                    torch.ones_like(c)], -1)], 1)
    pts = pts @ rot
    curv = 2 * a.squeeze(1) + 2 * b.squeeze(1).abs()           # |k1| + |k2| at the centre
    return pts, (curv - 3.7) / 1.35                              # standardised target


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 48, 96][seed % 3]
    k = [32, 24, 40][seed % 3]
    batch = [16, 24, 12][seed % 3]
    lr = [0.1, 0.15, 0.12][seed % 3]
    steps = 200
    model = PCPNetLite(width)
    batches = [_patches(g, batch, k) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr * (0.1 if fixed else 1.0), momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": F.mse_loss, "batches": batches,
            "steps": steps}
