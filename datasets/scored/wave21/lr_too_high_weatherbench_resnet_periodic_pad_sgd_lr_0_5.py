"""WeatherBench ResNet baseline (Rasp & Thuerey 2021) with periodic longitude padding, trained with SGD at lr 0.5.

Mechanism: a norm-free residual CNN forecasting z500/t850 anomalies 3 days ahead, latitude-weighted
MSE. The user swaps Adam for SGD+momentum and keeps a "0.5" from a BatchNorm ImageNet schedule.
Without normalisation the residual stack's curvature is far above 2/lr: the first updates are
larger than the weights themselves (update/weight >> 1e-3), residual branches blow up
geometrically across steps and the loss goes to inf/NaN within a few steps.

ORIGIN: None (global optimiser setting).
Fix: lr=0.01 with the same SGD+momentum.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Rasp & Thuerey 2021 WeatherBench ResNet baseline (periodic padding, latitude-weighted RMSE); divergence reports with SGD at ImageNet-scale lr"


class PeriodicConv2d(nn.Module):
    def __init__(self, cin, cout, k=3):
        super().__init__()
        self.p = k // 2
        self.conv = nn.Conv2d(cin, cout, k)

    def forward(self, x):
        x = F.pad(x, (self.p, self.p, 0, 0), mode="circular")
        x = F.pad(x, (0, 0, self.p, self.p), mode="replicate")
        return self.conv(x)


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = PeriodicConv2d(c, c)
        self.act = nn.LeakyReLU(0.1)
        self.c2 = PeriodicConv2d(c, c)

    def forward(self, x):
        return x + self.c2(self.act(self.c1(x)))


class WBResNet(nn.Module):
    def __init__(self, cin, c, nblocks):
        super().__init__()
        self.stem = PeriodicConv2d(cin, c, 5)
        self.blocks = nn.Sequential(*[ResBlock(c) for _ in range(nblocks)])
        self.head = PeriodicConv2d(c, 2)

    def forward(self, x):
        return self.head(self.blocks(F.leaky_relu(self.stem(x), 0.1)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 12][seed % 3]
    nblocks = [3, 2, 4][seed % 3]
    nlat, nlon = [(16, 32), (12, 24), (16, 32)][seed % 3]
    bs = [8, 8, 6][seed % 3]
    steps = [60, 50, 70][seed % 3]
    lr = 0.01 if fixed else [0.5, 0.8, 0.4][seed % 3]
    lat = torch.linspace(-80, 80, nlat)
    wlat = torch.cos(lat * math.pi / 180); wlat = (wlat / wlat.mean())[:, None]
    batches = []
    for _ in range(steps):
        x = F.avg_pool2d(torch.randn(bs, 4, nlat, nlon, generator=g), 3, 1, 1) * 2
        y = torch.stack([torch.roll(x[:, 0], 2, dims=-1) * 0.8 + 0.2 * x[:, 1],
                         torch.roll(x[:, 2], 1, dims=-1) * 0.7 - 0.3 * x[:, 3]], 1)
        batches.append((x, y))
    model = WBResNet(4, c, nblocks)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(out, target):
        return ((out - target) ** 2 * wlat).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
