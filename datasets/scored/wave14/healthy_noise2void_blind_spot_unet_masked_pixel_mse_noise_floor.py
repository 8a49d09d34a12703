"""Healthy run: Noise2Void (Krull et al., CVPR 2019) self-supervised denoising of
fluorescence-microscopy-like images with a small 2-level U-Net (BatchNorm, skip connections,
linear output), trained with Adam on noisy images only.

N2V recipe: in each patch ~1.5% of the pixels are "blind spots": their value is replaced by
a random neighbour's value and the loss is the MSE between the network output and the
ORIGINAL NOISY value, evaluated at the blind-spot pixels only.

Why it looks alarming but is fine: (1) the target is itself noisy, so the loss can never go
below the noise variance (sigma^2 ~ 0.01-0.02 here) -- after the fast initial drop the curve
flattens at a floor that looks like a plateau; (2) only ~60-250 pixels per batch enter the
loss, so the per-step loss is very noisy (+-30%); (3) the output is never compared to a clean
image at all. The model is nevertheless learning the clean signal steadily; the mean loss
over the last steps is far below the first steps.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Noise2Void (Krull, Buchholz & Jug 2019) / CSBDeep n2v training curves: masked "
          "blind-spot MSE against noisy targets, floor at the noise variance")


def block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
                         nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class UNet2(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.enc1 = block(1, w)
        self.enc2 = block(w, 2 * w)
        self.mid = block(2 * w, 4 * w)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.dec2 = block(4 * w, 2 * w)
        self.up1 = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec1 = block(2 * w, w)
        self.out = nn.Conv2d(w, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1)


def clean_images(g, bs, size):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    img = torch.zeros(bs, 1, size, size)
    for i in range(bs):
        for _ in range(6):                                 # fluorescent "cells"
            cy, cx = torch.rand(2, generator=g) * size
            r = 2 + 4 * float(torch.rand(1, generator=g))
            img[i, 0] += 0.8 * torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r ** 2))
    return img + 0.1


def make_batch(g, bs, size, sigma, frac):
    noisy = clean_images(g, bs, size) + sigma * torch.randn(bs, 1, size, size, generator=g)
    mask = torch.rand(bs, 1, size, size, generator=g) < frac
    # blind spots: replace by a random neighbour within a 5x5 window (not itself)
    dy = torch.randint(-2, 3, noisy.shape, generator=g)
    dx = torch.randint(-2, 3, noisy.shape, generator=g)
    dx[(dy == 0) & (dx == 0)] = 1
    iy = (torch.arange(size).view(1, 1, -1, 1) + dy).clamp(0, size - 1)
    ix = (torch.arange(size).view(1, 1, 1, -1) + dx).clamp(0, size - 1)
    b = torch.arange(bs).view(-1, 1, 1, 1).expand_as(iy)
    neighbour = noisy[b, 0, iy, ix].view_as(noisy)
    inp = torch.where(mask, neighbour, noisy)
    return inp, torch.cat([noisy, mask.float()], 1)


def n2v_loss(out, target):
    noisy, mask = target[:, :1], target[:, 1:]
    return ((out - noisy) ** 2 * mask).sum() / mask.sum()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(w=8, lr=2e-3, bs=8, size=32, sigma=0.1, frac=0.015, steps=120),
        dict(w=12, lr=1e-3, bs=6, size=40, sigma=0.14, frac=0.02, steps=100),
        dict(w=8, lr=4e-3, bs=12, size=24, sigma=0.12, frac=0.012, steps=140),
    ][seed % 3]
    torch.manual_seed(seed)
    model = UNet2(cfg["w"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(210 + seed)
    batches = [make_batch(g, cfg["bs"], cfg["size"], cfg["sigma"], cfg["frac"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=n2v_loss, batches=batches, steps=cfg["steps"])
