"""Small 3D U-Net for organ segmentation, soft Dice loss, Adam with a far-too-high lr.

Mechanism: a 3D U-Net (no normalisation layers, as in many lightweight 3D baselines) segments
a foreground organ (~10% of the voxels) in small synthetic CT-like volumes with a soft Dice
loss. The Adam learning rate (5e-2 .. 8e-2) was copied from a 2D notebook that used a
BatchNorm U-Net; on this unnormalised net every step moves the weights by a large fraction of
their size (update/weight ratio >> 1e-3). The first updates overshoot, the logits are thrown
to the all-background side, the soft Dice overlap collapses to ~0 and the loss plateaus near
1.0 -- above where it started.

ORIGIN: ``enc1.0`` -- the first convolution; the overshooting updates hit the whole network,
the input layer is where the activations first blow past their scale.

Fix: Adam at lr 2e-3 (the usual 3D U-Net setting); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = "enc1.0"
SOURCE = ("3D U-Net / V-Net organ segmentation with soft Dice (Milletari et al. 2016); MONAI and "
          "forum reports of 'Dice loss stuck at 1 / predicts only background' after copying a "
          "large Adam learning rate from a BatchNorm 2D recipe.")


def block(cin, cout):
    return nn.Sequential(nn.Conv3d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv3d(cout, cout, 3, padding=1), nn.ReLU())


class UNet3D(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.enc1 = block(1, c)
        self.enc2 = block(c, 2 * c)
        self.dec1 = block(3 * c, c)
        self.out = nn.Conv3d(c, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool3d(e1, 2))
        d1 = self.dec1(torch.cat([e1, F.interpolate(e2, scale_factor=2.0, mode="nearest")], 1))
        return self.out(d1)


def soft_dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    inter = (p * target).sum((1, 2, 3, 4))
    denom = p.sum((1, 2, 3, 4)) + target.sum((1, 2, 3, 4))
    return (1 - (2 * inter + eps) / (denom + eps)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    S = 16
    c = [8, 6, 8][seed % 3]
    bad_lr = [5e-2, 8e-2, 6e-2][seed % 3]
    bsz = [2, 3, 2][seed % 3]
    steps = 100
    zz, yy, xx = torch.meshgrid(*(torch.arange(S, dtype=torch.float32),) * 3, indexing="ij")

    def make_batch():
        vols, masks = [], []
        for _ in range(bsz):
            ctr = torch.rand(3, generator=g) * 6 + 5
            rad = torch.rand(3, generator=g) * 2 + 3
            d = ((zz - ctr[0]) / rad[0]) ** 2 + ((yy - ctr[1]) / rad[1]) ** 2 + ((xx - ctr[2]) / rad[2]) ** 2
            m = (d < 1).float()
            # organ slightly brighter than surrounding soft tissue, plus noise and a smooth bias field
            v = 0.8 * m + 0.25 * torch.randn(S, S, S, generator=g) + 0.2 * torch.sin(xx / 5 + float(torch.rand(1, generator=g)) * 6)
            vols.append(v[None])
            masks.append(m[None])
        return torch.stack(vols), torch.stack(masks)

    batches = [make_batch() for _ in range(steps)]
    model = UNet3D(c)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3 if fixed else bad_lr)
    return dict(model=model, optimizer=opt, loss_fn=soft_dice_loss, batches=batches, steps=steps)
