"""VideoPose3D-style (Pavllo et al. 2019) dilated temporal-conv 2D->3D pose lifter, BN-free,
trained with Adam on root-relative 3D joints standardised by the
dataset mean pose / std (Martinez et al. normalisation), MSE loss.

Mechanism: the user removed the BatchNorm1d layers (small batches of clips) and kept the
lr from a tuned-with-BN config (Adam lr 3e-2 .. 1e-1 instead of ~1e-3).  The first Adam steps
move every weight and bias by ~lr in the sign of its gradient; the 2D keypoints are fed as pixel coordinates divided by the image
size (all in [0, 1], not centred as in VideoPose3D), so these sign-coherent updates shift
the expansion conv's outputs uniformly and the pre-activations of the expand ReLU are pushed negative for
every frame and every clip.  Those units output exact zeros, receive no gradient and never
come back; the residual blocks and head only see zeros and the output collapses to the head
bias = the mean pose.  The standardised targets are zero-mean, so the loss sits at the
initial level (~1).

ORIGIN: ``expand_relu`` -- the first ReLU (after the 2D->C expansion conv) is the one that
dies; everything after it is starved.
Fix: Adam lr 1e-3 (fixed=True).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "expand_relu"
SOURCE = ("facebookresearch/VideoPose3D TemporalModel without BN; 'all outputs the same pose / "
          "loss flat' reports after raising the lr.")


class TemporalBlock(nn.Module):
    def __init__(self, c, dil):
        super().__init__()
        self.dil = dil
        self.conv = nn.Conv1d(c, c, 3, dilation=dil)
        self.relu1 = nn.ReLU()
        self.conv1x1 = nn.Conv1d(c, c, 1)
        self.relu2 = nn.ReLU()

    def forward(self, x):
        res = x[:, :, self.dil:-self.dil]
        return res + self.relu2(self.conv1x1(self.relu1(self.conv(x))))


class TemporalModel(nn.Module):
    def __init__(self, J, c, dils):
        super().__init__()
        self.expand_conv = nn.Conv1d(2 * J, c, 3, dilation=1)
        self.expand_relu = nn.ReLU()
        self.blocks = nn.Sequential(*[TemporalBlock(c, d) for d in dils])
        self.shrink = nn.Conv1d(c, 3 * J, 1)

    def forward(self, x):                    # B x T x J x 2
        B, T, J, _ = x.shape
        h = self.expand_relu(self.expand_conv(x.reshape(B, T, 2 * J).transpose(1, 2)))
        out = self.shrink(self.blocks(h))    # B x 3J x 1
        return out[:, :, 0].reshape(B, J, 3)


def make_batch(g, bs, T, J, bones):
    t = torch.arange(T).float()[None, :, None]
    phase = torch.rand(bs, 1, J, generator=g) * 6.28
    freq = 0.2 + 0.3 * torch.rand(bs, 1, 1, generator=g)
    base = bones[None, None]                                     # 1 x 1 x J x 3
    wob = 0.15 * torch.stack([torch.sin(freq * t + phase), torch.cos(freq * t + phase),
                              0.5 * torch.sin(2 * freq * t + phase)], -1)
    yaw = torch.rand(bs, 1, 1, generator=g) * 6.28
    p = base + wob
    x, y, z = p[..., 0], p[..., 1], p[..., 2]
    xr = torch.cos(yaw) * x + torch.sin(yaw) * z
    zr = -torch.sin(yaw) * x + torch.cos(yaw) * z
    p3 = torch.stack([xr, y, zr], -1)
    p3 = p3 - p3[:, :, :1]                                       # root-relative
    depth = 4.0 + p3[..., 2:3]
    p2 = p3[..., :2] / depth * 4.0 + 0.003 * torch.randn(bs, T, J, 2, generator=g)
    p2 = (p2 + 1.0) * 0.5                          # pixel coords / image size -> [0, 1] (not centred)
    return p2, p3[:, T // 2]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(J=12, c=64, dils=(3, 9), lr=3e-2, bs=32, steps=100),
           dict(J=10, c=96, dils=(3,), lr=5e-2, bs=16, steps=80),
           dict(J=14, c=48, dils=(3, 9), lr=1e-1, bs=48, steps=120)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 21)
    T = 3
    for d in cfg["dils"]:
        T += 2 * d
    bones = torch.randn(cfg["J"], 3, generator=g) * 0.4
    model = TemporalModel(cfg["J"], cfg["c"], cfg["dils"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else cfg["lr"])
    batches = [make_batch(g, cfg["bs"], T, cfg["J"], bones) for _ in range(cfg["steps"])]
    # Martinez-et-al. style target normalisation: subtract the mean pose, divide by the std
    ys = torch.cat([y for _, y in batches])
    mu, sd = ys.mean(0), ys.std(0) + 1e-3
    batches = [(x, (y - mu) / sd) for x, y in batches]
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
