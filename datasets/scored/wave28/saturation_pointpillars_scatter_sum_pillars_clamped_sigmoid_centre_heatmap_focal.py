"""PointPillars/CenterPoint-style BEV detector: a per-point Linear+ReLU encodes the decorated LiDAR
points of each pillar, the points are pooled into one pillar feature, a BEV conv head predicts a
centre heatmap through CenterNet's clamped sigmoid, trained with the penalty-reduced focal loss.

Mechanism: the pillar pooling was written as `scatter_add` (a sum over the points of a pillar)
instead of PointPillars' max (or a mean).  Pillars near the sensor hold 40-150 points, so every
pillar feature is the per-point response times the point count, and the head's logits come out
in the tens to hundreds.  CenterNet/CenterPoint squash them with
`clamp(sigmoid(x), 1e-4, 1 - 1e-4)`: for almost every cell the sigmoid is saturated past the
clamp from step 0, or is pushed there by the first few (count-scaled) SGD-momentum updates.  The
clamp's gradient is exactly zero there, so neither the head nor the pillar encoder receives a
gradient and the focal loss stays flat at a saturated value (a stall; nothing non-finite).

ORIGIN: "head.2", the 1x1 conv producing the heatmap logits: its outputs are the pre-activations
that saturate the (clamped) sigmoid, where the gradient stops.

Fix: mean-pool the points of each pillar (sum / count), so the features and the logits no
longer scale with the point count.  Everything else is identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "head.2"
SOURCE = ("Lang et al., PointPillars (CVPR 2019) pillar feature net (max over points); ports "
          "pooling with torch_scatter scatter_add; CenterNet/CenterPoint `_sigmoid` = "
          "clamp(sigmoid(x), 1e-4, 1-1e-4) whose gradient vanishes once saturated "
          "(CenterNet issues 'hm_loss does not decrease')")


class PillarCenterNet(nn.Module):
    def __init__(self, c, mean_pool):
        super().__init__()
        self.mean_pool = mean_pool
        self.pfn = nn.Linear(6, c)
        self.head = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(c, 1, 1))

    def forward(self, pts, mask):
        # pts: (B, G, G, P, 6) decorated points, mask: (B, G, G, P) valid points
        f = F.relu(self.pfn(pts)) * mask[..., None]
        pooled = f.sum(3)                                   # scatter-add over the pillar
        if self.mean_pool:
            pooled = pooled / mask.sum(3)[..., None].clamp_min(1.0)
        logits = self.head(pooled.permute(0, 3, 1, 2)).squeeze(1)
        return torch.clamp(torch.sigmoid(logits), 1e-4, 1 - 1e-4)


def focal_loss(pred, gt):
    pos = gt.eq(1).float()
    neg = 1.0 - pos
    pos_loss = torch.log(pred) * (1 - pred) ** 2 * pos
    neg_loss = torch.log(1 - pred) * pred ** 2 * (1 - gt) ** 4 * neg
    n_pos = pos.sum().clamp_min(1.0)
    return -(pos_loss.sum() + neg_loss.sum()) / n_pos


def _scene(g, b, grid, pmax):
    ii, jj = torch.meshgrid(torch.arange(grid, dtype=torch.float32),
                            torch.arange(grid, dtype=torch.float32), indexing="ij")
    rng = torch.sqrt((jj + 1) ** 2 + (ii - grid / 2) ** 2)
    density = (pmax * 2.5 / rng).clamp(40, pmax)
    n_pts = (density[None] * (0.8 + 0.2 * torch.rand(b, grid, grid, generator=g))).long()
    mask = (torch.arange(pmax)[None, None, None] < n_pts[..., None]).float()
    centre = (torch.rand(b, grid, grid, generator=g) < 0.12).float()
    # gaussian-splatted centre heatmap (peaks exactly 1 at centres)
    heat = F.max_pool2d(centre[:, None], 3, 1, 1)[:, 0] * 0.5
    heat = torch.maximum(heat, centre)
    obj = (heat > 0).float()
    u = torch.rand(b, grid, grid, pmax, 2, generator=g) - 0.5
    on_obj = (torch.rand(b, grid, grid, pmax, generator=g) < 0.7).float() * obj[..., None]
    z = -1.7 + 0.05 * torch.randn(b, grid, grid, pmax, generator=g)
    z = z + on_obj * (0.3 + 1.2 * torch.rand(b, grid, grid, pmax, generator=g)) * (
        1 + centre[..., None])
    refl = 0.1 + 0.2 * torch.rand(b, grid, grid, pmax, generator=g) + 0.4 * on_obj
    zc = z - (z * mask).sum(3, keepdim=True) / mask.sum(3, keepdim=True).clamp_min(1)
    rngf = (rng / grid)[None, :, :, None].expand_as(z)
    pts = torch.stack([u[..., 0], u[..., 1], z, refl, zc, rngf], -1)
    return (pts * mask[..., None], mask), heat


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    c = [16, 24, 32][seed % 3]
    batch = [4, 6, 3][seed % 3]
    grid = [8, 8, 10][seed % 3]
    pmax = [96, 128, 80][seed % 3]
    lr = [0.03, 0.025, 0.035][seed % 3]
    steps = 120
    model = PillarCenterNet(c, mean_pool=fixed)
    batches = [_scene(g, batch, grid, pmax) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": focal_loss, "batches": batches,
            "steps": steps}
