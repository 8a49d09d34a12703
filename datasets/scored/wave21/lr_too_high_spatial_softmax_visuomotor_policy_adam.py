"""Deep visuomotor policy (Levine et al. 2016 style): conv layers -> spatial soft-argmax
(expected 2-D keypoint per channel) -> MLP -> end-effector velocity command, trained by
behaviour cloning with Adam.  The user set lr = 0.5-0.8 (copied from an SGD recipe,
"the keypoint layer learns slowly").

Mechanism: Adam normalises each step to ~lr per weight regardless of the gradient, so
every step changes each weight by ~0.5 - far more than the default-init weights
themselves (update/weight ratios ~1e2).  The conv feature maps and MLP weights jump
around, the soft-argmax snaps between pixels, many ReLUs flip off, and the action
regression never settles: the loss ends at or above its start (a stall).
ORIGIN: None - every layer overshoots.
Fix: lr = 1e-3.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "End-to-end visuomotor policies with spatial softmax (Levine, Finn et al. 2016); BC reproductions reporting loss not decreasing / oscillating with Adam lr 1e-2..5e-2"


class SpatialSoftmax(nn.Module):
    def forward(self, f):
        B, C, H, W = f.shape
        p = F.softmax(f.flatten(2), -1).view(B, C, H, W)
        ys = torch.linspace(-1, 1, H)
        xs = torch.linspace(-1, 1, W)
        return torch.cat([(p.sum(3) * ys).sum(-1), (p.sum(2) * xs).sum(-1)], -1)


class VisuomotorPolicy(nn.Module):
    def __init__(self, c, k):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, c, 5, stride=2, padding=2), nn.ReLU(),
                                  nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(c, k, 3, padding=1))
        self.keypoints = SpatialSoftmax()
        self.mlp = nn.Sequential(nn.Linear(2 * k + 7, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 7))

    def forward(self, img, joints):
        return self.mlp(torch.cat([self.keypoints(self.conv(img)), joints], -1))


def _batch(g, B, S):
    img = torch.rand(B, 3, S, S, generator=g) * 0.1
    pos = torch.randint(2, S - 2, (B, 2), generator=g)
    for i in range(B):
        r, c = int(pos[i, 0]), int(pos[i, 1])
        img[i, 0, r - 1:r + 2, c - 1:c + 2] = 1.0
    joints = torch.randn(B, 7, generator=g) * 0.3
    target = (pos.float() / (S - 1) * 2 - 1)
    act = torch.cat([target - joints[:, :2], -joints[:, 2:] * 0.5], -1)
    return (img, joints), act


def build(seed: int, fixed: bool = False) -> dict:
    c, k, lr, B = [(16, 8, 0.5, 16), (12, 6, 0.6, 12), (16, 8, 0.8, 24)][seed % 3]
    if fixed:
        lr = 1e-3
    torch.manual_seed(seed)
    S = 24
    model = VisuomotorPolicy(c, k)
    g = torch.Generator().manual_seed(13000 + seed)
    steps = 100
    batches = [_batch(g, B, S) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
