"""PointNet autoencoder for partial LiDAR object scans: a shared per-point MLP with masked max-pool
encodes each scan (120-400 valid points, padded to 400 with a mask) into a 64-d code, an MLP decoder
emits 64 points, and the loss is the Chamfer distance SUMMED over the valid input points (plus the
mean over decoded points), as in several reference implementations. Because scans have very
different numbers of returns, the loss per batch swings by a factor of ~2 with the point-count mix
and looks erratic, yet the run is healthy: AdamW steadily lowers it and nothing is non-finite."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "PointNet AE (Achlioptas et al. 2018) with summed Chamfer loss over variable-size masked clouds"

P_MAX, P_OUT = 400, 64


class PointNetAE(nn.Module):
    def __init__(self, code=64):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, code))
        self.decoder = nn.Sequential(nn.Linear(code, 96), nn.ReLU(), nn.Linear(96, P_OUT * 3))

    def forward(self, pts, mask):
        f = self.point_mlp(pts).masked_fill(~mask[..., None], float("-inf"))
        code = f.max(1).values
        rec = self.decoder(code).view(-1, P_OUT, 3)
        return rec, pts, mask


def chamfer_sum(out, _):
    rec, pts, mask = out
    d = torch.cdist(pts, rec) ** 2                         # [B,P,P_OUT]
    in_to_rec = d.min(2).values * mask.float()
    rec_to_in = d.masked_fill(~mask[..., None], float("inf")).min(1).values
    return (in_to_rec.sum(1) + rec_to_in.mean(1)).mean()


def scan_batch(g, B):
    pts = torch.zeros(B, P_MAX, 3)
    n = torch.randint(120, P_MAX + 1, (B,), generator=g)
    for b in range(B):
        kind = int(torch.randint(0, 3, (1,), generator=g))
        u = torch.rand(P_MAX, 2, generator=g)
        if kind == 0:       # box side seen from the sensor (car-like)
            p = torch.stack([u[:, 0] * 2 - 1, torch.full((P_MAX,), -0.5), u[:, 1] * 0.8 - 0.4], 1)
        elif kind == 1:     # cylinder half (pole / pedestrian)
            a = u[:, 0] * math.pi
            p = torch.stack([0.3 * torch.cos(a), -0.3 * torch.sin(a), u[:, 1] * 1.6 - 0.8], 1)
        else:               # L-shaped corner
            s = u[:, 0] < 0.5
            p = torch.stack([torch.where(s, u[:, 1] * 2 - 1, torch.full((P_MAX,), -1.0)),
                             torch.where(s, torch.full((P_MAX,), -0.5), u[:, 1] - 0.5), u[:, 0] * 0.6 - 0.3], 1)
        pts[b] = p + 0.01 * torch.randn(P_MAX, 3, generator=g)
    mask = torch.arange(P_MAX)[None] < n[:, None]
    return (pts, mask), torch.zeros(B)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PointNetAE()
    data = [scan_batch(g, 16) for _ in range(20)]
    steps = 120
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=chamfer_sum, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
