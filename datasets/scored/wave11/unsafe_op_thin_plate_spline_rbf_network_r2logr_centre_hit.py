"""Thin-plate-spline RBF network for scattered-data regression (terrain height from survey points): the
centres are a fixed random subset of the training points, as in classic RBF interpolation, and only
the RBF weights and the affine term are trained (SGD + momentum). The kernel is written straight
from the formula, phi(r) = r^2 log r = 0.5 * d2 * log(d2) with d2 = ||x - c||^2. That is fine for
every point that is not a centre, and the run is calm for its first 10-50 steps; but the training
stream also contains the survey points that were picked as centres, and the first batch that
includes one has d2 = 0 exactly, so phi = 0 * log(0) = 0 * (-inf) = NaN. The prediction and the loss
are NaN, the NaN gradient lands in the read-out weights, and every later loss is NaN. (scipy's
Rbf/RBFInterpolator use xlogy for exactly this reason.) The fixed run clamps d2 before the log
(log(d2.clamp_min(1e-12)), which gives the correct limit phi(0) = 0); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "tps"
SOURCE = ("thin-plate spline kernel r^2 log r evaluated at r = 0 (0 * log 0 = NaN); scipy.interpolate "
          "Rbf 'thin_plate' uses xlogy to define phi(0) = 0; common hand-written RBF-net ports")

N_CENTRES = 10


class TPSBasis(nn.Module):
    def __init__(self, centres, safe):
        super().__init__()
        self.register_buffer("centres", centres)
        self.safe = safe

    def forward(self, x):
        d2 = ((x.unsqueeze(1) - self.centres.unsqueeze(0)) ** 2).sum(-1)
        if self.safe:
            return 0.5 * d2 * torch.log(d2.clamp_min(1e-12))
        return 0.5 * d2 * torch.log(d2)


class TPSNet(nn.Module):
    def __init__(self, centres, safe):
        super().__init__()
        self.tps = TPSBasis(centres, safe)
        self.head = nn.Linear(N_CENTRES, 1, bias=False)
        self.affine = nn.Linear(2, 1)
        nn.init.zeros_(self.head.weight)

    def forward(self, x):
        return (self.head(self.tps(x)) + self.affine(x)).squeeze(-1)


def loss_fn(pred, y):
    return ((pred - y) ** 2).mean()


def _height(x):
    return (torch.sin(2.0 * x[:, 0]) + 0.5 * torch.cos(3.0 * x[:, 1]) + 0.8 * x[:, 0] * x[:, 1]
            + 0.3 * (x ** 2).sum(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    pool = torch.rand(20000, 2, generator=g) * 2 - 1
    heights = _height(pool) + 0.02 * torch.randn(20000, generator=g)
    centre_idx = torch.randperm(20000, generator=g)[:N_CENTRES]
    model = TPSNet(pool[centre_idx].clone(), safe=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    steps, B = 250, 32
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, 20000, (B,), generator=g)
        batches.append((pool[idx], heights[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
