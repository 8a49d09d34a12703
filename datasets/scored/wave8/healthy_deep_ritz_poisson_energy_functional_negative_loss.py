"""Deep Ritz method (E & Yu 2018) for the Poisson problem -Laplace(u) = f on the unit square with
u = 0 on the boundary: the loss is the Monte-Carlo estimate of the variational energy
0.5*|grad u|^2 - f*u over fresh interior points plus a boundary penalty beta*u^2, with grad u taken
by autograd (create_graph) inside the forward of a small residual tanh network (the paper's
residual blocks).  The energy is not a residual: it starts near 0, becomes NEGATIVE and
converges to -pi^2/4 ~ -2.47 for f = 2 pi^2 sin(pi x) sin(pi y); it is also noisy because the
quadrature points are resampled every step.  A loss that is negative, sign-changing and
noisy looks alarming to generic monitoring, but this is a healthy run."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("E & Yu, 'The Deep Ritz Method' (Commun. Math. Stat. 2018); variational PINN losses that are "
          "negative at the optimum")

W = 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(W, W), nn.Linear(W, W)

    def forward(self, h):
        return h + torch.tanh(self.fc2(torch.tanh(self.fc1(h))))


class RitzNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(2, W)
        self.blocks = nn.Sequential(Block(), Block())
        self.out = nn.Linear(W, 1)

    def u(self, x):
        return self.out(self.blocks(self.inp(x))).squeeze(-1)

    def forward(self, x_in, x_bd):
        x_in = x_in.detach().requires_grad_(True)
        u_in = self.u(x_in)
        grad = torch.autograd.grad(u_in.sum(), x_in, create_graph=True)[0]
        return {"u": u_in, "grad_sq": (grad ** 2).sum(1), "u_bd": self.u(x_bd)}


def ritz_energy(out, f):
    interior = (0.5 * out["grad_sq"] - f * out["u"]).mean()
    return interior + 100.0 * (out["u_bd"] ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)

    def sample(n_in, n_bd):
        x = torch.rand(n_in, 2, generator=g)
        f = 2 * math.pi ** 2 * torch.sin(math.pi * x[:, 0]) * torch.sin(math.pi * x[:, 1])
        t = torch.rand(n_bd, generator=g)
        side = torch.randint(0, 4, (n_bd,), generator=g)
        xb = torch.stack([torch.where(side == 0, 0.0, torch.where(side == 1, 1.0, t)),
                          torch.where(side == 2, 0.0, torch.where(side == 3, 1.0, t))], 1)
        return (x, xb), f

    steps = 300
    batches = [sample(256, 128) for _ in range(steps)]
    model = RitzNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=ritz_energy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
