"""Healthy run. Small U-Net (GroupNorm, SiLU) for lesion segmentation with deep supervision: the model
returns a tuple (main logits, auxiliary logits from the coarse decoder level), and the loss is
BCE + per-image soft Dice on both (aux weighted 0.4). About one batch in eight comes from healthy
scans whose masks are completely empty; for those the per-image Dice term is 1 - 1/(sum(p) + 1), so
a handful of false-positive pixels makes it jump close to 1 and the total loss spikes to several
times its running level, then drops back on the next ordinary batch. The spike height falls slowly as the
model learns to keep empty scans empty; nothing is wrong with the training (AdamW, constant lr)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("nnU-Net style Dice+CE with deep supervision; Milletari et al. 2016 soft Dice; forum threads on "
          "Dice loss spikes for empty ground-truth masks")


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(4, cout), nn.SiLU())


class DSUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.e1, self.e2, self.mid = block(1, 8), block(8, 16), block(16, 32)
        self.up2 = nn.ConvTranspose2d(32, 16, 2, 2)
        self.d2 = block(32, 16)
        self.aux = nn.Conv2d(16, 1, 1)
        self.up1 = nn.ConvTranspose2d(16, 8, 2, 2)
        self.d1 = block(16, 8)
        self.head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.d2(torch.cat([self.up2(m), e2], 1))
        d1 = self.d1(torch.cat([self.up1(d2), e1], 1))
        return self.head(d1), self.aux(d2)


def _dice_bce(logits, target):
    p = torch.sigmoid(logits)
    inter = (p * target).sum(dim=(1, 2, 3))
    dice = 1 - (2 * inter + 1) / (p.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + 1)
    return F.binary_cross_entropy_with_logits(logits, target) + dice.mean()


def loss_fn(out, target):
    main, aux = out
    aux_t = F.max_pool2d(target, 2)
    return _dice_bce(main, target) + 0.4 * _dice_bce(aux, aux_t)


def _scans(g, n, S=24, lesion=True):
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    tissue = 0.4 + 0.1 * torch.sin(xx[None] * 0.5 + torch.rand(n, 1, 1, generator=g) * 6)
    masks = torch.zeros(n, 1, S, S)
    if lesion:
        for i in range(n):
            cy, cx = (4 + torch.rand(2, generator=g) * (S - 8)).tolist()
            r = 2 + 3 * float(torch.rand(1, generator=g))
            masks[i, 0][((yy - cy) ** 2 + (xx - cx) ** 2) < r ** 2] = 1.0
    imgs = tissue[:, None] + 0.5 * masks + 0.1 * torch.randn(n, 1, S, S, generator=g)
    return imgs, masks


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DSUNet()
    steps, bs = 120, 8
    batches = []
    for s in range(steps):
        empty = (s % 8 == 7)
        batches.append(_scans(g, bs, lesion=not empty))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
