"""Lidar bird's-eye-view occupancy segmentation: a small encoder-decoder CNN takes a 3-channel
BEV raster of a lidar sweep (max height, point density, mean intensity per 0.5 m cell) and
predicts the per-cell occupancy of the drivable-space grid (occupied by an obstacle or not),
BCE-with-logits summed over all cells (reduction='sum', as in many occupancy-grid codebases),
trained under float16 autocast with a GradScaler, Adam.

Why it looks suspicious but is healthy: the summed loss is in the thousands; the GradScaler
starts at 2**24, so the first backward passes overflow, the scaler skips those optimizer steps
(parameters do not change, an exactly-zero update) and halves the scale until the scaled
gradients are finite - the standard, working AMP mechanism.  Afterwards training proceeds
normally and the loss falls.

ORIGIN: None (healthy).

Fix: nothing to fix.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP docs: GradScaler skips steps with inf/NaN gradients and backs off the "
          "scale; lidar BEV occupancy / free-space segmentation (PointPillars-style BEV rasters)")


class BevOccupancyNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(2 * c, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, 1, 1))

    def forward(self, x):
        e = self.enc1(x)
        d = self.up(self.down(e))
        return self.dec(torch.cat([e, d], 1)).squeeze(1)


def _scene(bs, H, g):
    occ = torch.zeros(bs, H, H)
    for b in range(bs):
        n = int(torch.randint(3, 9, (1,), generator=g))
        for _ in range(n):
            cx, cy = torch.randint(2, H - 6, (2,), generator=g).tolist()
            w, l = torch.randint(2, 6, (2,), generator=g).tolist()
            occ[b, cx:cx + w, cy:cy + l] = 1.0
    height = occ * (1.0 + 0.5 * torch.rand(bs, H, H, generator=g)) + 0.15 * torch.randn(bs, H, H, generator=g)
    density = occ * 0.8 + 0.3 * torch.rand(bs, H, H, generator=g)
    inten = 0.5 * torch.rand(bs, H, H, generator=g) + 0.2 * occ
    return torch.stack([height, density, inten], 1), occ


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    c = [6, 8, 10][seed % 3]
    H = [24, 20, 24][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [8, 12, 6][seed % 3]
    steps = 80
    model = BevOccupancyNet(c)
    batches = [_scene(bs, H, g) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(reduction="sum"),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=scaler)
