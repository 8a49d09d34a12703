"""Physics-informed network for a 1-D Poisson problem -u'' = f on [-1, 1], u(+-1) = 0, trained
with Adam at lr = 1.0 because the learning rate was kept from the L-BFGS stage of the recipe.

Mechanism: the usual PINN recipe is "Adam, then L-BFGS"; torch.optim.LBFGS is normally
created with lr=1 (a line-search step length, not a gradient-step size).  This script runs
Adam alone and passes it the same lr=1.0 (0.8 in one seed's variant of the config).  Adam
moves every weight by ~lr = 1 per step in the sign of its gradient; for a tanh MLP with
unit-scale weights that is a step as large as the weights themselves.  The network jumps
between unrelated functions, its tanh units swing into saturation and back, u'' (computed by
autograd) swings with them, and the physics residual loss just bounces around its starting
level for the whole run (no inf/NaN: Adam's step is bounded).  Update/weight ratios are ~1
instead of ~1e-3.

ORIGIN: None (lr_too_high: the optimiser setting, not a module, is the cause).

Fix: Adam at lr 3e-3 (the L-BFGS lr=1 belongs to the L-BFGS stage only).  Seeds change the
width, the depth, the learning rate and the number of collocation points per step.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Raissi et al. PINN reference code and DeepXDE 'adam then L-BFGS' recipes; "
          "torch.optim.LBFGS(lr=1) default; reports of PINN training 'loss oscillates and never "
          "decreases' with a large Adam lr (DeepXDE FAQ on learning rates, Wang et al. 2021 "
          "'Understanding and mitigating gradient pathologies in PINNs').")


def _f(x):
    # forcing for the exact solution u = sin(pi x) + 0.3 sin(4 pi x)
    return (math.pi ** 2 * torch.sin(math.pi * x)
            + 0.3 * (4 * math.pi) ** 2 * torch.sin(4 * math.pi * x))


class PoissonPINN(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers, d = [], 1
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers += [nn.Linear(d, 1)]
        self.u = nn.Sequential(*layers)

    def forward(self, x):
        x = x.clone().requires_grad_(True)
        u = self.u(x)
        du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
        d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
        residual = -d2u - _f(x)
        boundary = self.u(torch.tensor([[-1.0], [1.0]]))
        return torch.cat([residual.flatten(), 10.0 * boundary.flatten()])


def _loss(out, target):
    return ((out - target) ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    width = [32, 48, 40][seed % 3]
    depth = [3, 3, 4][seed % 3]
    lr = 3e-3 if fixed else [1.0, 1.0, 0.8][seed % 3]
    npts = [128, 96, 160][seed % 3]
    steps = 150
    g = torch.Generator().manual_seed(9000 + seed)
    batches = []
    for _ in range(steps):
        # stratified (jittered-grid) collocation points, resampled every step
        x = -1 + 2 * (torch.arange(npts).float() + torch.rand(npts, generator=g)) / npts
        x = x.unsqueeze(1)
        batches.append((x, torch.zeros(npts + 2)))
    torch.manual_seed(seed)
    model = PoissonPINN(width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=_loss, batches=batches, steps=steps)
