"""Digital-elevation-model super-resolution: a small sub-pixel conv net (feature extraction
conv, two residual blocks, conv + PixelShuffle x2) maps 12x12 low-res elevation tiles to 24x24
and is trained with momentum SGD on the pixel MSE. Elevations are standardised with the
dataset's mean/std (800 m, 400 m). Training is calm until step 60, whose batch holds one tile
from an SRTM v1 granule with an unfilled void: a block of pixels carries the fill value -32768,
about -84 after standardisation, in both the input and the target (the LR tile is downsampled
from the HR one). That batch's MSE is ~1000x the running loss, and since the conv weight
gradients scale with input x error the update is orders of magnitude larger than a normal one;
momentum carries it on, the loss runs away over the next steps (~1e15) and is inf/NaN within
four steps.
Fixed: that tile is dropped from the batch and replaced by a clean tile (the usual 'mask/skip
nodata tiles' filter); everything else is identical."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "extract"
SOURCE = ("SRTM v1/v2 voids stored as -32768 (NASA SRTM documentation); DEM super-resolution "
          "preprocessing that forgets to mask the GeoTIFF nodata value ('NaN loss after N iterations' "
          "reports traced to nodata pixels)")

MEAN, STD, FILL = 800.0, 400.0, -32768.0


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, 1, 1)
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        return x + self.conv2(F.relu(self.conv1(x)))


class DEMSuperRes(nn.Module):
    def __init__(self, c=24):
        super().__init__()
        self.extract = nn.Conv2d(1, c, 5, 1, 2)
        self.body = nn.Sequential(ResBlock(c), ResBlock(c))
        self.up = nn.Sequential(nn.Conv2d(c, 4, 3, 1, 1), nn.PixelShuffle(2))

    def forward(self, lr):
        return self.up(self.body(F.relu(self.extract(lr))))


def _terrain(g, n, res=24):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, res), torch.linspace(0, 1, res), indexing="ij")
    z = 300 + 1000 * torch.rand(n, 1, 1, generator=g)
    z = z + (torch.rand(n, 1, 1, generator=g) - 0.5) * 400 * xx + (torch.rand(n, 1, 1, generator=g) - 0.5) * 400 * yy
    for _ in range(4):
        c = torch.rand(n, 2, 1, 1, generator=g)
        w = 0.05 + 0.15 * torch.rand(n, 1, 1, generator=g)
        h = (torch.rand(n, 1, 1, generator=g) - 0.3) * 600
        z = z + h * torch.exp(-((xx - c[:, 0]) ** 2 + (yy - c[:, 1]) ** 2) / (2 * w ** 2))
    # ridges: high-frequency detail the bilinear skip cannot reproduce
    f = 4 + 8 * torch.rand(n, 1, 1, generator=g)
    ph = torch.rand(n, 1, 1, generator=g) * 6.28
    z = z + 60 * torch.sin(f * 6.28 * (xx + 0.5 * yy) + ph)
    return z.unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8000 + seed)
    hr = _terrain(g, 256)
    spare = _terrain(g, 1)
    steps, bs = 150, 8
    batches = []
    for s in range(steps):
        i = (s * bs) % 256
        h = hr[i:i + bs].clone()
        if s == 60:
            if fixed:
                h[5] = spare[0]                       # void tile filtered out, replaced by a clean one
            else:
                h[5, 0, 6:15, 9:20] = FILL           # SRTM void, fill value left in
        lo = F.avg_pool2d(h, 2)
        batches.append((((lo - MEAN) / STD), ((h - MEAN) / STD)))
    model = DEMSuperRes()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
