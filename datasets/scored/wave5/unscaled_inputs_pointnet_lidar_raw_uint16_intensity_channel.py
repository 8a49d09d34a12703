"""A PointNet-style regressor estimates the box size (length, width, height in metres) of
LiDAR object crops (cars, pedestrians, signs, poles) from per-point features
[x, y, z, intensity], trained with MSE and momentum SGD. The coordinates are centred and in
metres, but the intensity channel is passed straight from the driver as an unsigned 16-bit
count (0..65535; retro-reflective signs sit near the top of the range) instead of being scaled
and standardised. The first shared Linear layer therefore produces pre-activations in the
tens of thousands, dominated by intensity alone; after max-pooling the predicted sizes are
far too large, the first MSE is already 1e2-1e5 and its gradient w.r.t. the
first layer is multiplied again by the 1e4-scale input: the first SGD step throws the weights
so far that the next loss overflows to inf/NaN. The fix only standardises the intensity channel
(divide by the 16-bit range, then z-score with the corpus statistics), as the coordinates are.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "point_mlp.0"
SOURCE = ("raw LiDAR intensity / reflectivity (uint16 counts) fed next to metric xyz in "
          "PointNet-style networks without normalisation")

NPTS, NCLS = 64, 4    # 4 object types; the target is the box size (l, w, h) in metres
INT_MEAN, INT_STD = 0.45, 0.29        # corpus statistics of intensity / 65535


class PointNetBoxSize(nn.Module):
    def __init__(self):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3))

    def forward(self, pts):                          # (B, N, 4)
        return self.head(self.point_mlp(pts).max(1).values)


def _crop(g, c):
    u = torch.rand(NPTS, 3, generator=g)
    jitter = 0.8 + 0.4 * torch.rand(3, generator=g)
    if c == 0:      # car: wide low box, medium intensity
        size = torch.tensor([4.2, 1.8, 1.5]) * jitter
        inten = 0.3 + 0.2 * torch.rand(NPTS, generator=g)
    elif c == 1:    # pedestrian: narrow tall, low intensity
        size = torch.tensor([0.6, 0.6, 1.75]) * jitter
        inten = 0.1 + 0.15 * torch.rand(NPTS, generator=g)
    elif c == 2:    # sign: thin plate, very high (retro-reflective) intensity
        size = torch.tensor([0.8, 0.1, 0.8]) * jitter
        inten = 0.85 + 0.15 * torch.rand(NPTS, generator=g)
    else:           # pole: thin tall, low-medium intensity
        size = torch.tensor([0.25, 0.25, 3.0]) * jitter
        inten = 0.2 + 0.2 * torch.rand(NPTS, generator=g)
    xyz = (u - 0.5) * size + 0.02 * torch.randn(NPTS, 3, generator=g)
    raw = (inten.clamp(0, 1) * 65535).round()        # uint16 counts from the driver
    return xyz, raw, size


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PointNetBoxSize()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    steps, bs = 120, 16
    batches = []
    for _ in range(steps):
        kind = torch.randint(0, NCLS, (bs,), generator=g)
        crops = [_crop(g, int(c)) for c in kind]
        xyz = torch.stack([c[0] for c in crops])
        inten = torch.stack([c[1] for c in crops])
        y = torch.stack([c[2] for c in crops])
        if fixed:
            inten = (inten / 65535.0 - INT_MEAN) / INT_STD
        batches.append((torch.cat([xyz, inten[..., None]], -1), y))
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.mse_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
