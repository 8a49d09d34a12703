"""6-DoF GraspNet-style grasp evaluator (Mousavian et al. 2019), reduced: a PointNet over the
object point cloud merged with the gripper-control points of a candidate grasp (a per-point
'is gripper' flag), shared per-point MLP, global pooling, tanh MLP head, one success logit,
BCE-with-logits loss, Adam.

Mechanism: the global feature is pooled with ``.sum(dim=1)`` over the ~200-400 points instead
of the PointNet max-pool.  The per-point ReLU features are non-negative, so the pooled vector is
N times the mean feature (hundreds of times larger than a max-pooled feature) and points in
almost the same direction for every grasp; the first tanh layer of the head gets huge
pre-activations, sits at +-1 for every sample (1 - tanh^2 ~ 0), passes no gradient to the PointNet and carries no information about the
grasp.  The loss stalls at the label entropy.

ORIGIN: ``head.1`` -- the first Tanh of the head is the unit that saturates.
Fix: PointNet max-pool (fixed=True), the pre-activations stay O(1).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "head.1"
SOURCE = ("NVlabs/6dof-graspnet evaluator (PointNet++ backbone); sum-vs-max pooling mistakes "
          "in PointNet re-implementations saturating a tanh head.")


class GraspEvaluator(nn.Module):
    def __init__(self, c, h, pool):
        super().__init__()
        self.pool = pool
        self.point_mlp = nn.Sequential(nn.Conv1d(4, c // 2, 1), nn.ReLU(),
                                       nn.Conv1d(c // 2, c, 1), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(c, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh(), nn.Linear(h, 1))

    def forward(self, pts):                       # B x N x 4 (xyz, gripper flag)
        f = self.point_mlp(pts.transpose(1, 2))   # B x C x N
        gfeat = f.max(-1).values if self.pool == "max" else f.sum(-1)
        return self.head(gfeat).squeeze(-1)


def make_batch(g, bs, n_obj, n_grip=16):
    # object: box of random size on the table; grasp: a top-down pinch along x (gripper control
    # points) at a small x-y offset; success iff the box fits between the open fingers (its
    # x-extent < the gripper's usable opening of 2 x 0.05 m)
    size = 0.02 + 0.06 * torch.rand(bs, 1, 3, generator=g)
    obj = (torch.rand(bs, n_obj, 3, generator=g) * 2 - 1) * size
    centre = (torch.rand(bs, 1, 3, generator=g) * 2 - 1) * 0.01
    centre[..., 2] = size[..., 2] + 0.01
    ang = (torch.rand(bs, 1, generator=g) * 2 - 1) * 0.1
    t = torch.linspace(-1, 1, n_grip)[None, :]
    fingers = torch.stack([torch.cos(ang) * t * 0.04, torch.sin(ang) * t * 0.04,
                           torch.zeros(bs, n_grip)], -1) + centre
    label = (size[:, 0, 0] < 0.05).float()
    pts = torch.cat([torch.cat([obj, torch.zeros(bs, n_obj, 1)], -1),
                     torch.cat([fingers, torch.ones(bs, n_grip, 1)], -1)], 1) * 10.0   # dm units
    return pts, label


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(c=128, h=64, n=256, lr=1e-3, bs=32, steps=100),
           dict(c=64, h=64, n=384, lr=2e-3, bs=24, steps=90),
           dict(c=96, h=32, n=320, lr=1e-3, bs=48, steps=120)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 91)
    model = GraspEvaluator(cfg["c"], cfg["h"], "max" if fixed else "sum")
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = [make_batch(g, cfg["bs"], cfg["n"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.binary_cross_entropy_with_logits,
                batches=batches, steps=cfg["steps"])
