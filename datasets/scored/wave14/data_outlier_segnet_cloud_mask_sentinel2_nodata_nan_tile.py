"""SegNet (VGG-style encoder with BatchNorm, max-unpooling decoder driven by the pooling
indices) trained with Adam to segment clouds / cloud shadow / clear sky on 4-band
Sentinel-2 tiles (B2, B3, B4, B8 reflectance / 10000).

Mechanism: the tiles are read with ``rasterio`` as masked arrays and ``.filled(np.nan)``; one
scene lies on the edge of the satellite swath, so a wedge of its pixels are nodata and arrive
as NaN. Every other batch is clean, so the run is calm until that batch: its forward pass
produces NaN in the first conv, BatchNorm spreads it across the whole batch, the loss is NaN
and Adam writes NaN into every weight -- all later steps are NaN.

ORIGIN: None -- the model is innocent; a single corrupt input batch (data) is the cause.

Fix: treat nodata as what it is: fill it with 0 and mark those pixels ``ignore_index`` in the
label (the usual ``nodata -> 255`` convention); the batch is otherwise unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ('Known pattern: remote-sensing segmentation pipelines reading GeoTIFFs as masked '
          'arrays filled with NaN for nodata (swath-edge Sentinel-2 tiles); the loss turns '
          'NaN at that batch and never recovers')


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
                         nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class SegNet(nn.Module):
    def __init__(self, in_ch, width, n_classes):
        super().__init__()
        w1, w2, w3 = width, 2 * width, 4 * width
        self.enc1 = nn.Sequential(conv_bn(in_ch, w1), conv_bn(w1, w1))
        self.enc2 = nn.Sequential(conv_bn(w1, w2), conv_bn(w2, w2))
        self.enc3 = nn.Sequential(conv_bn(w2, w3), conv_bn(w3, w3))
        self.dec3 = nn.Sequential(conv_bn(w3, w3), conv_bn(w3, w2))
        self.dec2 = nn.Sequential(conv_bn(w2, w2), conv_bn(w2, w1))
        self.dec1 = nn.Sequential(conv_bn(w1, w1), nn.Conv2d(w1, n_classes, 3, padding=1))

    def forward(self, x):
        x = self.enc1(x); s1 = x.shape; x, i1 = F.max_pool2d(x, 2, 2, return_indices=True)
        x = self.enc2(x); s2 = x.shape; x, i2 = F.max_pool2d(x, 2, 2, return_indices=True)
        x = self.enc3(x); s3 = x.shape; x, i3 = F.max_pool2d(x, 2, 2, return_indices=True)
        x = self.dec3(F.max_unpool2d(x, i3, 2, 2, output_size=s3))
        x = self.dec2(F.max_unpool2d(x, i2, 2, 2, output_size=s2))
        return self.dec1(F.max_unpool2d(x, i1, 2, 2, output_size=s1))


def smooth_field(g, bs, size, cells):
    f = torch.rand(bs, 1, cells, cells, generator=g)
    return F.interpolate(f, size=(size, size), mode="bilinear", align_corners=False)


def make_tile(g, bs, size):
    """Clear land (vegetation-like spectrum), thick cloud (bright in all bands), cloud shadow
    (dark).  Labels: 0 clear, 1 cloud, 2 shadow."""
    land = torch.tensor([0.05, 0.08, 0.06, 0.30]).view(1, 4, 1, 1)
    x = land + 0.03 * smooth_field(g, bs, size, 8).repeat(1, 4, 1, 1) + 0.01 * torch.randn(bs, 4, size, size, generator=g)
    cloud = smooth_field(g, bs, size, 4)[:, 0] > 0.62
    shadow = torch.roll(cloud, shifts=(size // 8, size // 8), dims=(1, 2)) & ~cloud
    y = torch.zeros(bs, size, size, dtype=torch.long)
    y[cloud] = 1
    y[shadow] = 2
    xc = x.permute(0, 2, 3, 1)
    xc[cloud] = 0.45 + 0.05 * torch.rand(int(cloud.sum()), 4, generator=g)
    xc[shadow] = xc[shadow] * 0.35
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=8, lr=2e-3, bs=4, steps=60, bad_step=31),
        dict(width=12, lr=1e-3, bs=3, steps=70, bad_step=44),
        dict(width=8, lr=3e-3, bs=6, steps=50, bad_step=19),
    ][seed % 3]
    torch.manual_seed(seed)
    size = 32
    model = SegNet(4, cfg["width"], 3)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(100 + seed)
    batches = [make_tile(g, cfg["bs"], size) for _ in range(cfg["steps"])]
    # the swath-edge scene: a diagonal wedge of nodata pixels in one tile of one batch
    x, y = batches[cfg["bad_step"]]
    r = torch.arange(size)
    wedge = (r.view(-1, 1) + r.view(1, -1)) > int(1.3 * size)
    x[0, :, wedge] = float("nan")          # rasterio masked array .filled(np.nan)
    if fixed:
        nodata = torch.isnan(x).any(1)
        x[torch.isnan(x)] = 0.0
        y[nodata] = 255
    loss_fn = nn.CrossEntropyLoss(ignore_index=255)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
