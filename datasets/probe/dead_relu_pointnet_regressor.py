"""PointNet regressor with a ReLU on its output (to force non-negative predictions) that dies.

Mechanism
---------
A PointNet (shared per-point MLP -> max-pool -> MLP head) regresses a small
non-negative property of each point cloud (its bounding-box volume, 0.01-0.35).
To "guarantee" non-negative predictions the head ends in ``nn.ReLU()``
(module ``head.3``), and -- following the usual advice for output ReLUs -- the
last Linear's bias is initialised to +0.5 so the unit starts active.  At init
the output pre-activation is ~0.4-0.6 for every cloud, far above the targets
(mean ~0.07), so every sample pushes it down with the same sign.  Adam
(lr 3e-3-6e-3, beta1 = 0.9) moves the bias and each of the 64 last-layer
weights by ~lr per step in that direction (pre-activation change ~0.2-0.4 per
step), and within 5 steps the pre-activation overshoots below 0 for *every*
cloud (measured at step 5: max over the batch -0.06 / -0.53 / -0.82 for seeds
0/1/2).  From then on relu' = 0 for every sample, so the gradient of every
parameter (all of them flow through the output ReLU) is exactly 0, and Adam's
decaying momentum keeps pushing the pre-activation further down (to -1..-6 by
step 30).  The prediction is a constant 0 and the loss freezes at
mean(y^2) ~ 0.005-0.009 for the remaining ~245 steps: a dead-ReLU plateau,
while the fixed run reaches ~1e-4.

ORIGIN = "head.3": the output ReLU module, the unit that dies (nothing can
recover once its pre-activation is negative for all inputs).

fixed=True: the output activation is ``LeakyReLU(0.01)`` instead of ReLU
(same model otherwise, same init, data, optimizer and lr): the small negative
slope lets the gradient pull the pre-activation back and the loss keeps
falling.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.3"
SOURCE = ("'Regression network outputs all zeros / loss stuck' reports caused by a ReLU on the "
          "output layer dying (StackOverflow / PyTorch forums, 'dying ReLU' - Lu et al. 2019); "
          "PointNet (Qi et al. 2017) shared-MLP + max-pool architecture")


class PointNetRegressor(nn.Module):
    def __init__(self, w1, w2, leaky):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(3, w1), nn.ReLU(),
                                       nn.Linear(w1, w2), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(w2, 64), nn.ReLU(), nn.Linear(64, 1),
                                  nn.LeakyReLU(0.01) if leaky else nn.ReLU())
        # "start the output ReLU in its active region": positive output bias
        nn.init.constant_(self.head[2].bias, 0.5)

    def forward(self, x):                       # x: (B, N, 3)
        g = self.point_mlp(x).max(dim=1).values
        return self.head(g).squeeze(-1)


def clouds(g, bs, n):
    kind = torch.randint(0, 3, (bs,), generator=g)
    u = torch.rand(bs, n, 2, generator=g)
    th, ph = 2 * math.pi * u[..., 0], torch.acos(2 * u[..., 1] - 1)
    sphere = torch.stack([torch.sin(ph) * torch.cos(th), torch.sin(ph) * torch.sin(th), torch.cos(ph)], -1)
    cube = torch.rand(bs, n, 3, generator=g) * 2 - 1
    ax = torch.randint(0, 3, (bs, n, 1), generator=g)
    sg = (torch.randint(0, 2, (bs, n, 1), generator=g) * 2 - 1).float()
    cube.scatter_(2, ax, sg)
    cyl = torch.stack([torch.cos(th), torch.sin(th), 2 * u[..., 1] - 1], -1)
    p = torch.stack([sphere, cube, cyl], 1)[torch.arange(bs), kind]
    scale = 0.3 + 0.7 * torch.rand(bs, 3, generator=g)
    p = p * scale[:, None] + 0.01 * torch.randn(bs, n, 3, generator=g)
    vol = 0.35 * scale.prod(-1) * torch.tensor([0.52, 1.0, 0.785])[kind]
    return p, vol


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(7000 + seed)
    steps = 250
    n_pts = [128, 96, 128][seed % 3]
    batches = [clouds(g, 32, n_pts) for _ in range(steps)]
    torch.manual_seed(seed)
    model = PointNetRegressor([64, 48, 64][seed % 3], [128, 128, 96][seed % 3], leaky=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=[3e-3, 5e-3, 6e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
