"""A PointNet encoder / MLP decoder autoencoder is trained on small object scans (64 points,
metres, roughly unit size) with a squared-distance Chamfer loss and momentum SGD. The scans
come from a LiDAR driver that encodes "no return" as the sensor's maximum range, so in a few
scans a handful of rows are (655.35, 655.35, 655.35) instead of a real point. The first
batch that contains such a scan (step 40) feeds coordinates ~650x larger than anything else
into the encoder and, through the Chamfer term, produces squared distances ~1e6: the loss
jumps from ~0.1 to ~1e4, the gradient is ~1e4x its usual size, momentum SGD takes a
giant step and the loss is NaN two steps later. The fix only drops the
max-range rows (replacing them by re-sampled valid points of the same scan), the usual
range filter of a LiDAR pipeline.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("LiDAR 'no return' encoded as max range (e.g. 655.35 m for uint16 centimetres) left "
          "in point clouds; Chamfer-loss autoencoders (Achlioptas et al. 2018) diverging on it")

NPTS, LATENT, MAX_RANGE = 64, 32, 655.35


class PointAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 128), nn.ReLU())
        self.to_latent = nn.Linear(128, LATENT)
        self.decoder = nn.Sequential(nn.Linear(LATENT, 128), nn.ReLU(), nn.Linear(128, NPTS * 3))

    def forward(self, pts):                               # (B, N, 3)
        z = self.to_latent(self.encoder(pts).max(dim=1).values)
        return self.decoder(z).view(-1, NPTS, 3)


def chamfer(a, b):
    d = ((a[:, :, None, :] - b[:, None, :, :]) ** 2).sum(-1)
    return d.min(2).values.mean() + d.min(1).values.mean()


def _scan(g):
    kind = int(torch.randint(0, 3, (1,), generator=g))
    u = torch.randn(NPTS, 3, generator=g)
    if kind == 0:
        p = u / u.norm(dim=1, keepdim=True)
    elif kind == 1:
        p = torch.rand(NPTS, 3, generator=g) * 2 - 1
        ax = torch.randint(0, 3, (NPTS,), generator=g)
        p[torch.arange(NPTS), ax] = torch.sign(p[torch.arange(NPTS), ax])
    else:
        th = torch.rand(NPTS, generator=g) * 2 * math.pi
        p = torch.stack([th.cos(), th.sin(), torch.rand(NPTS, generator=g) * 2 - 1], 1)
    return p * (0.5 + 0.5 * torch.rand(1, generator=g))


def _range_filter(cloud, g):
    bad = cloud.norm(dim=1) > 100.0
    if bad.any():
        good = cloud[~bad]
        cloud = cloud.clone()
        cloud[bad] = good[torch.randint(0, len(good), (int(bad.sum()),), generator=g)]
    return cloud


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PointAE()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    steps, bs = 120, 16
    gf = torch.Generator().manual_seed(seed + 1000)    # only used by the range filter
    batches = []
    for s in range(steps):
        clouds = torch.stack([_scan(g) for _ in range(bs)])
        if s in (40, 41, 85):                            # scans with max-range "no return" rows
            for i in range(2):
                rows = torch.randperm(NPTS, generator=g)[:3]
                clouds[i, rows] = MAX_RANGE
        if fixed:
            clouds = torch.stack([_range_filter(c, gf) for c in clouds])
        batches.append((clouds, clouds))
    return dict(model=model, optimizer=opt, loss_fn=chamfer, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
