"""PointNet object classifier for airborne-LiDAR segments (pole, car, tree crown, roof patch). The
points are fed in georeferenced UTM metres (easting ~4e5, northing ~5.4e6, elevation ~1e2) straight
from the LAS files, instead of being centred on the segment centroid and scaled to the unit sphere
as in the PointNet pipeline. The first shared Linear sees inputs of magnitude 1e5-1e6 whose useful
variation (the object's shape, a few metres) is ~1e-6 of the value: pre-activations and logits are
~1e5-1e6, the cross-entropy is ~1e5 from step 0, and the SGD+momentum gradients of the first
layer are proportional to the 1e6-scale inputs: the weights are thrown to ~1e4-1e9 within a couple
of steps and the loss turns into inf/NaN by step ~5.
Fixed: per-segment centring and unit-sphere scaling of the coordinates (standardised inputs)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "point_mlp.0"
SOURCE = "PointNet (Qi et al. 2017) pc_normalize (centroid + unit sphere); LiDAR/LAS users feeding raw UTM coordinates and reporting huge losses / no convergence"


class PointNet(nn.Module):
    def __init__(self, width, n_cls):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(3, width), nn.ReLU(), nn.Linear(width, 2 * width), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(2 * width, width), nn.ReLU(), nn.Linear(width, n_cls))

    def forward(self, pts):                  # (B, N, 3)
        return self.head(self.point_mlp(pts).max(1).values)


def _segment(g, c, n):
    u = torch.rand(n, 3, generator=g)
    if c == 0:    # pole: thin vertical cylinder 6 m
        th = u[:, 0] * 6.283
        p = torch.stack([0.15 * torch.cos(th), 0.15 * torch.sin(th), 6 * u[:, 1]], 1)
    elif c == 1:  # car: 4.5 x 1.8 x 1.5 box surface
        p = (u - 0.5) * torch.tensor([4.5, 1.8, 1.5]); p[:, 2] = p[:, 2].abs() + 0.0
    elif c == 2:  # tree crown: sphere radius 3 at 5 m height
        p = F.normalize(torch.randn(n, 3, generator=g), dim=1) * 3 + torch.tensor([0, 0, 5.0])
    else:         # roof patch: tilted plane 8 x 8
        p = torch.stack([8 * u[:, 0], 8 * u[:, 1], 0.4 * 8 * u[:, 0]], 1)
    return p + 0.05 * torch.randn(n, 3, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17000 + seed)
    width = [32, 24, 40][seed % 3]
    bs = [16, 24, 12][seed % 3]
    steps = [80, 90, 100][seed % 3]
    n_pts, n_cls = 64, 4
    origin = torch.tensor([[451000.0, 5411000.0, 230.0], [389000.0, 5650000.0, 95.0], [512000.0, 5302000.0, 410.0]])[seed % 3]
    def make(n):
        y = torch.randint(0, n_cls, (n,), generator=g)
        pts = []
        for c in y.tolist():
            p = _segment(g, c, n_pts)
            offset = origin + torch.tensor([2000.0, 2000.0, 20.0]) * torch.rand(3, generator=g)
            p = p + offset                                         # georeferenced UTM metres
            if fixed:                                              # PointNet pc_normalize
                p = p - p.mean(0, keepdim=True)
                p = p / p.norm(dim=1).max()
            pts.append(p)
        return torch.stack(pts), y
    pool = [make(bs) for _ in range(15)]
    batches = [pool[i % 15] for i in range(steps)]
    model = PointNet(width, n_cls)
    opt = torch.optim.SGD(model.parameters(), lr=[0.03, 0.03, 0.02][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
