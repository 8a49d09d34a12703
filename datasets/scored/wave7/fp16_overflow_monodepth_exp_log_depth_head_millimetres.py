"""Monocular depth regression on synthetic 16x16 road scenes (ground plane whose depth grows
towards the horizon, boxes of closer objects, far sky capped at 80 m) with a small conv encoder
/ nearest-upsampling decoder. The head predicts log-depth and returns depth = exp(.) in
millimetres, the unit of the LiDAR ground-truth arrays, with its bias initialised to log(20 m);
the loss is the relative absolute error |d - d*| / d*. Training runs under float16 autocast with
a GradScaler (so small gradients are safe) but without any fp32 island. In fp32 nothing is
wrong, but exp of an fp16 value above 11.09 is above 65504, so as soon as the network has
learned that the sky and the far road are 65-80 m away (65 000-80 000 mm) its exp overflows to
inf and the loss becomes inf, after a stretch of normal training; the scaler can only skip those
steps, it cannot repair an inf in the forward. Fixed: the same autocast region in bfloat16 (fp32
exponent range, 80 000 is representable); the precision is the only change."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "head"
SOURCE = ("exp/log-depth heads (Eigen et al. 2014 style) with metric depth in millimetres under "
          "torch.autocast(float16): depths above 65.5 m are not representable in fp16 "
          "('inf loss with AMP for far depths' reports in depth-estimation repos)")

RES, MAX_MM = 16, 80000.0


class DepthHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, 1, 3, 1, 1)
        nn.init.constant_(self.conv.bias, math.log(20000.0))

    def forward(self, x):
        return torch.exp(self.conv(x))  # depth in millimetres


class MonoDepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(2, 8, 3, 2, 1), nn.ELU())    # 8x8
        self.enc2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.ELU())   # 4x4
        self.dec2 = nn.Sequential(nn.Conv2d(16 + 8, 8, 3, 1, 1), nn.ELU())
        self.dec1 = nn.Sequential(nn.Conv2d(8 + 2, 8, 3, 1, 1), nn.ELU())
        self.head = DepthHead(8)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        d2 = self.dec2(torch.cat([F.interpolate(e2, scale_factor=2, mode="nearest"), e1], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2, mode="nearest"), x], 1))
        return self.head(d1)


def _scenes(g, n):
    rows = torch.arange(RES).float()[:, None].expand(RES, RES)
    horizon = 4 + torch.randint(0, 3, (n,), generator=g).float()
    depth = torch.empty(n, 1, RES, RES)
    img = torch.empty(n, 1, RES, RES)
    for i in range(n):
        h = horizon[i]
        ground = 1.6 * 350.0 / (rows - h).clamp_min(0.5)  # m, pinhole ground plane
        d = torch.where(rows > h, ground.clamp(max=MAX_MM / 1000), torch.full_like(rows, MAX_MM / 1000))
        im = torch.where(rows > h, 0.3 + 0.1 * torch.sin(rows * 40.0 / d), torch.full_like(rows, 0.9))
        for _ in range(2):
            c0 = int(torch.randint(0, RES - 3, (1,), generator=g))
            r1 = int(h) + int(torch.randint(3, RES - int(h), (1,), generator=g))
            hh = max(1, int(12 * 3 / max(ground[r1, 0].item(), 3)))
            dd = ground[r1, 0].item() * 0.97
            d[max(0, r1 - hh):r1, c0:c0 + 3] = dd
            im[max(0, r1 - hh):r1, c0:c0 + 3] = 0.55 + 0.2 * float(torch.rand(1, generator=g))
        depth[i, 0] = d * 1000.0
        img[i, 0] = im + 0.03 * torch.randn(RES, RES, generator=g)
    coord = (rows / RES)[None, None].expand(n, 1, RES, RES)
    return torch.cat([img, coord], 1), depth


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12000 + seed)
    x, d = _scenes(g, 256)
    steps, bs = 100, 8
    batches = [(x[(s * bs) % 256:(s * bs) % 256 + bs], d[(s * bs) % 256:(s * bs) % 256 + bs]) for s in range(steps)]
    model = MonoDepthNet()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)

    def rel_abs(out, y):
        return ((out.float() - y).abs() / y).mean()

    return dict(model=model, optimizer=opt, loss_fn=rel_abs, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16,
                scaler=torch.amp.GradScaler("cpu"))
