"""PointNet shape classifier on point clouds back-projected from depth-sensor scans.
Most scans are clean, but one mid-run batch holds organised clouds (is_dense=False) whose invalid
depth pixels became NaN points; the point MLP carries them through the max-pool into the loss and
gradients, and after one Adam step every weight is NaN.
fixed=True: that batch with its non-finite points filtered out (clouds re-filled from valid points).
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("PCL/ROS organised clouds (is_dense=false) carry NaN points for invalid depth returns; "
          "PointNet/PointNet++ issue pattern 'loss becomes nan' fixed by removeNaNFromPointCloud / "
          "filtering non-finite points in the loader")

N_PTS = 128
N_CLS = 4


class PointNet(nn.Module):
    def __init__(self, n_cls=N_CLS):
        super().__init__()
        self.point_mlp = nn.Sequential(
            nn.Conv1d(3, 32, 1), nn.BatchNorm1d(32), nn.ReLU(),
            nn.Conv1d(32, 64, 1), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 128, 1), nn.BatchNorm1d(128), nn.ReLU(),
        )
        self.head = nn.Sequential(
            nn.Linear(128, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.0),
            nn.Linear(64, n_cls),
        )

    def forward(self, pts):                      # pts: (B, N, 3)
        f = self.point_mlp(pts.transpose(1, 2))   # (B, 128, N)
        return self.head(f.max(dim=2).values)


def _shape(c, n, g):
    u = torch.rand(n, 2, generator=g)
    if c == 0:      # sphere
        th, ph = 2 * math.pi * u[:, 0], torch.acos(1 - 2 * u[:, 1])
        p = torch.stack([ph.sin() * th.cos(), ph.sin() * th.sin(), ph.cos()], 1)
    elif c == 1:    # cube surface
        p = torch.rand(n, 3, generator=g) * 2 - 1
        ax = torch.randint(0, 3, (n,), generator=g)
        p[torch.arange(n), ax] = torch.sign(torch.randn(n, generator=g))
    elif c == 2:    # cylinder
        th = 2 * math.pi * u[:, 0]
        p = torch.stack([th.cos(), th.sin(), 2 * u[:, 1] - 1], 1)
    else:           # cone
        th, h = 2 * math.pi * u[:, 0], u[:, 1]
        p = torch.stack([(1 - h) * th.cos(), (1 - h) * th.sin(), 2 * h - 1], 1)
    q, _ = torch.linalg.qr(torch.randn(3, 3, generator=g))
    s = 0.6 + 0.8 * torch.rand(1, generator=g)
    return (p @ q) * s + 0.02 * torch.randn(n, 3, generator=g)


def _fill_valid(cloud, g):
    ok = torch.isfinite(cloud).all(1)
    valid = cloud[ok]
    idx = torch.randint(0, valid.shape[0], (cloud.shape[0],), generator=g)
    return torch.where(ok.unsqueeze(1), cloud, valid[idx])


def build(seed: int, fixed: bool = False) -> dict:
    steps, bs = 150, 16
    g = torch.Generator().manual_seed(500 + seed)
    bad_step = 70 + int(torch.randint(0, 30, (1,), generator=g))
    batches = []
    for t in range(steps):
        y = torch.randint(0, N_CLS, (bs,), generator=g)
        x = torch.stack([_shape(int(c), N_PTS, g) for c in y])
        if t == bad_step:
            # two scans from a frame with dropped-out depth pixels: NaN points
            for b in range(2):
                holes = torch.rand(N_PTS, generator=g) < 0.15
                x[b, holes] = float("nan")
            if fixed:
                gf = torch.Generator().manual_seed(900 + seed)   # separate stream: later batches identical
                x = torch.stack([_fill_valid(x[b], gf) for b in range(bs)])
        batches.append((x, y))
    torch.manual_seed(seed)
    model = PointNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
