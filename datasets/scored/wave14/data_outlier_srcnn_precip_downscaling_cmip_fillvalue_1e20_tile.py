"""DeepSD-style statistical downscaling of daily precipitation with an SRCNN (low-res GCM
precipitation upsampled to the high-res grid + high-res elevation -> high-res precipitation).
One tile read from a CMIP-style netCDF chunk carries raw ``_FillValue = 1e20`` pixels.

Mechanism
---------
The tiles are read with ``xr.open_dataset(..., mask_and_scale=False)`` (to keep memory low)
so missing cells are not decoded to NaN: they keep the CMIP fill value 1e20.  The training
loop standardises precipitation with the climatological mean/std (a few mm/day), leaving
those cells at ~2e19.  All other batches are clean and the run trains calmly; at the step
where the corrupt tile enters the batch, the squared error (2e19)^2 overflows float32 and the
MSE is inf (the backward pass then writes NaN into every weight).

ORIGIN
------
None: the failure comes from the data (one corrupt tile), not from any layer; every
module only propagates the huge values.

Fix
---
Filter the tile: the loader drops samples containing fill values (``(x >= 1e19).any()``),
so that one batch is two samples smaller.  Model, optimiser and all other batches are
identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("DeepSD (Vandal et al. 2017) SRCNN precipitation downscaling; CMIP/ESGF netCDF "
          "_FillValue=1e20 read without mask_and_scale -> inf loss on one batch")

FILL = 1.0e20
PR_MEAN, PR_STD = 3.0, 5.0     # mm/day climatology used for standardisation


class SRCNN(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.conv1 = nn.Conv2d(2, c1, 9, padding=4)
        self.conv2 = nn.Conv2d(c1, c2, 1)
        self.conv3 = nn.Conv2d(c2, 1, 5, padding=2)

    def forward(self, x):
        h = F.relu(self.conv1(x))
        h = F.relu(self.conv2(h))
        return self.conv3(h) + x[:, :1]          # residual on the upsampled LR field


def _smooth(g, B, n, width):
    z = torch.randn(B, 1, n, n, generator=g)
    k = torch.arange(-2 * width, 2 * width + 1, dtype=torch.float32)
    k = torch.exp(-0.5 * (k / width) ** 2)
    k = k / k.sum()
    z = F.conv2d(F.pad(z, (2 * width,) * 4, mode="circular"), k.view(1, 1, 1, -1))
    z = F.conv2d(z, k.view(1, 1, -1, 1))
    return z / z.flatten(1).std(1).view(B, 1, 1, 1)


def _tiles(g, B, n, factor):
    elev = _smooth(g, B, n, 3).abs()                      # km
    storm = _smooth(g, B, n, 2)
    pr = F.softplus(2.0 * storm + 1.5 * elev - 0.5) * 3.0  # mm/day, orographic enhancement
    lr = F.avg_pool2d(pr, factor)
    lr_up = F.interpolate(lr, scale_factor=factor, mode="bilinear", align_corners=False)
    return lr_up, elev, pr


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=24, factor=4, c1=32, c2=16, B=8, lr=2e-3, steps=80, bad=37),
           dict(n=32, factor=4, c1=24, c2=12, B=6, lr=2e-3, steps=50, bad=21),
           dict(n=24, factor=3, c1=40, c2=20, B=10, lr=5e-4, steps=70, bad=55)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    model = SRCNN(cfg["c1"], cfg["c2"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for step in range(cfg["steps"]):
        lr_up, elev, pr = _tiles(g, cfg["B"], cfg["n"], cfg["factor"])
        if step == cfg["bad"]:
            # two tiles of this batch come from a chunk with missing cells (raw _FillValue)
            n = cfg["n"]
            lr_up[:2, :, : n // 3, :] = FILL
            pr[:2, :, : n // 3, :] = FILL
        x = torch.cat([(lr_up - PR_MEAN) / PR_STD, elev], dim=1)
        y = (pr - PR_MEAN) / PR_STD
        if fixed:
            keep = ~((lr_up >= 1e19).flatten(1).any(1) | (pr >= 1e19).flatten(1).any(1))
            x, y = x[keep], y[keep]
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
