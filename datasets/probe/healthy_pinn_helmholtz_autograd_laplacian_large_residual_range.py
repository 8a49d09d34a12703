"""Physics-informed network for the 2-D Helmholtz problem of Wang, Teng & Perdikaris (2021):
u_xx + u_yy + k^2 u = q on [-1,1]^2, exact u = sin(pi x) sin(3 pi y), u = 0 on the boundary;
the Laplacian comes from torch.autograd.grad(create_graph=True) inside the model. q is O(100),
so the residual MSE starts near 2e3, sits on a plateau with small bumps for 100-180 steps while
the tanh net picks up the sin(3 pi y) mode, then falls by about two orders of magnitude.
This is normal PINN training, not a failure. fixed=True: identical run (nothing to fix).
"""
import math

import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Helmholtz benchmark from Wang, Teng & Perdikaris, 'Understanding and mitigating "
          "gradient pathologies in physics-informed neural networks' (SIAM J. Sci. Comput. "
          "2021); PINN residuals via autograd.grad(create_graph=True) as in Raissi et al. 2019.")


class HelmholtzPINN(nn.Module):
    def __init__(self, width, depth, k):
        super().__init__()
        layers, d = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)
        self.k = k

    def forward(self, xy_int, xy_bc):
        xy = xy_int.clone().requires_grad_(True)
        u = self.net(xy)
        du = torch.autograd.grad(u.sum(), xy, create_graph=True)[0]
        u_xx = torch.autograd.grad(du[:, 0].sum(), xy, create_graph=True)[0][:, 0]
        u_yy = torch.autograd.grad(du[:, 1].sum(), xy, create_graph=True)[0][:, 1]
        residual = u_xx + u_yy + self.k ** 2 * u.squeeze(-1)
        return residual, self.net(xy_bc).squeeze(-1)


def pinn_loss(out, target):
    residual, u_bc = out
    q, g = target
    return ((residual - q) ** 2).mean() + 10.0 * ((u_bc - g) ** 2).mean()


def _boundary(n, g):
    t = torch.rand(n, generator=g) * 2 - 1
    side = torch.randint(0, 4, (n,), generator=g)
    one = torch.ones(n)
    x = torch.where(side == 0, -one, torch.where(side == 1, one, t))
    y = torch.where(side == 2, -one, torch.where(side == 3, one, t))
    return torch.stack([x, y], -1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    a1, a2, k = 1.0, 3.0, 1.0
    steps, n_int, n_bc = 400, 256, 128

    def forcing(xy):
        x, y = xy[:, 0], xy[:, 1]
        u = torch.sin(a1 * math.pi * x) * torch.sin(a2 * math.pi * y)
        return (-(a1 * math.pi) ** 2 - (a2 * math.pi) ** 2 + k ** 2) * u

    batches = []
    for _ in range(steps):
        xy_int = torch.rand(n_int, 2, generator=g) * 2 - 1
        xy_bc = _boundary(n_bc, g)
        batches.append(((xy_int, xy_bc), (forcing(xy_int), torch.zeros(n_bc))))
    model = HelmholtzPINN(width=48, depth=3, k=k)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=optimizer, loss_fn=pinn_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
