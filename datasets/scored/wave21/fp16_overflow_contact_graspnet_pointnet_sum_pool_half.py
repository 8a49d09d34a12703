"""PointNet grasp-quality network (Contact-GraspNet / GPD style): shared per-point MLP
(1x1 Conv1d + ReLU) over a 3-D point cloud of the object in the gripper frame, a global
SUM pool over the points (the repo uses sum pooling "to keep point-count information"),
a LayerNorm and an MLP head predicting grasp success.  The user turned on float16 autocast on CPU
to speed training up, no GradScaler, no fp32 island.

Mechanism: the point coordinates are in millimetres (~700 mm along the approach axis), so the per-point
features are O(10..100) after the last shared layer; summing them over 768-1024 points in float16 produces values
past 65504 -> inf in the pooled feature (torch keeps sum in fp16 under CPU autocast); the
head then outputs inf/NaN and the BCE loss is non-finite.
ORIGIN: the last shared point-wise conv (point_mlp.4) - its fp16 output is what the pool
sums to inf.
Fix: autocast with bfloat16 (same exponent range as fp32) instead of float16.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "point_mlp.4"
SOURCE = "PointNet / grasp-evaluation networks with sum/global pooling under AMP: 'loss becomes nan with autocast fp16' reports, pooled feature overflows float16 max 65504"


class GraspPointNet(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.point_mlp = nn.Sequential(
            nn.Conv1d(3, w, 1), nn.ReLU(),
            nn.Conv1d(w, 2 * w, 1), nn.ReLU(),
            nn.Conv1d(2 * w, 4 * w, 1), nn.ReLU(),
        )
        self.head = nn.Sequential(nn.LayerNorm(4 * w), nn.Linear(4 * w, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, pts):  # pts: (B, 3, N)
        f = self.point_mlp(pts)
        return self.head(f.sum(dim=-1)).squeeze(-1)


def _batch(g, B, N):
    # object points in gripper frame (mm, as exported by the grasp dataset); the grasp
    # succeeds when the object is offset towards the fixed finger (x > 0)
    centre = torch.randn(B, 3, 1, generator=g) * 30.0
    pts = centre + torch.randn(B, 3, N, generator=g) * 40.0
    pts[:, 2] += 700.0  # ~700 mm along the approach axis (camera-to-palm)
    y = (centre[:, 0, 0] > 0).float()
    return pts, y


def build(seed: int, fixed: bool = False) -> dict:
    w, N, lr, B = [(32, 1024, 2e-3, 8), (32, 1024, 3e-3, 12), (32, 768, 2e-3, 12)][seed % 3]
    torch.manual_seed(seed)
    model = GraspPointNet(w)
    g = torch.Generator().manual_seed(7000 + seed)
    steps = 60
    batches = [_batch(g, B, N) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=torch.bfloat16 if fixed else torch.float16)
