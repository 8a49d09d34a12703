"""Parametric Deep Ritz surrogate (E & Yu 2018 energy formulation, operator-
learning style) for the p-Laplace equation -(|u'|^(p-2) u')' = f on [0, 1]
(p = 3 or 4, a standard nonlinear Deep Ritz test case): an MLP maps the
Fourier coefficients a of the source f to the solution u on a uniform grid of
N = 512-1024 points (Dirichlet conditions imposed by a 4x(1-x) envelope).
Training is unsupervised: the loss is the Ritz energy
mean_x( |u'|^p / p - f u ), with u' computed by a forward-difference matrix D
(entries +-1/dx) applied as a matmul.  Adam, CPU mixed precision
(torch.autocast float16, no GradScaler).

Mechanism: under autocast the matmul u @ D^T runs in float16, and the energy
density |u'|^p is then formed in float16 too.  The difference quotient is
(u_{j+1} - u_j) / dx with 1/dx = N-1 ~ 500-1000: while the surrogate is still
untrained its output is rough from grid point to grid point and |u'| is in
the hundreds, so |u'|^p (and |u'|^(p-1) in the backward) is far beyond the
float16 maximum 65504.  The energy is inf at the first step, the backward
produces inf/NaN gradients and every weight becomes NaN.  The same energies
(~1e6-1e7 at init) are harmless in a format with float32 range, and Adam
smooths the field within a few dozen steps.

ORIGIN is ``energy``: the module that applies D and raises the derivative to
the power p is the first op producing a non-finite value (the MLP outputs are
finite).

Fix: autocast with bfloat16 instead of float16 (float32 exponent range);
model, data and optimiser unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "energy"
SOURCE = ("Deep Ritz method (E & Yu 2018), p-Laplacian energy on a finite-difference "
          "grid; fp16 autocast overflow of powers of difference quotients on fine grids")


class RitzEnergy(nn.Module):
    def __init__(self, n, modes, p):
        super().__init__()
        self.p = p
        x = torch.linspace(0.0, 1.0, n)
        dx = 1.0 / (n - 1)
        d = torch.zeros(n - 1, n)
        d[torch.arange(n - 1), torch.arange(n - 1)] = -1.0 / dx
        d[torch.arange(n - 1), torch.arange(1, n)] = 1.0 / dx
        m = torch.arange(1, modes + 1).float().unsqueeze(1)
        self.register_buffer("D", d)
        self.register_buffer("f_basis", (m * math.pi) ** 2 * torch.sin(m * math.pi * x))

    def _energy(self, u, a):
        du = u @ self.D.T
        f = a @ self.f_basis
        return (du.abs() ** self.p / self.p).mean(1) - (f * u).mean(1)

    def forward(self, u, a):
        return self._energy(u, a)


class RitzSurrogate(nn.Module):
    def __init__(self, modes, n, p, hidden):
        super().__init__()
        layers, prev = [], modes
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.Tanh()]
            prev = h
        layers.append(nn.Linear(prev, n))
        self.net = nn.Sequential(*layers)
        x = torch.linspace(0.0, 1.0, n)
        self.register_buffer("envelope", 4.0 * x * (1.0 - x))
        self.energy = RitzEnergy(n, modes, p)

    def forward(self, a):
        u = self.net(a) * self.envelope
        return self.energy(u, a)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(n=512, modes=4, p=4, hidden=[128, 128], bs=32, lr=1e-3, steps=120),
        dict(n=1024, modes=6, p=3, hidden=[256], bs=16, lr=5e-4, steps=100),
        dict(n=768, modes=5, p=4, hidden=[128, 128, 128], bs=24, lr=1e-3, steps=140),
    ][seed % 3]
    g = torch.Generator().manual_seed(314 + seed)
    torch.manual_seed(seed)
    model = RitzSurrogate(cfg["modes"], cfg["n"], cfg["p"], cfg["hidden"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def loss_fn(energy, target):        # unsupervised Ritz energy; target unused (zeros)
        return energy.float().mean()

    scale = 1.0 / torch.arange(1, cfg["modes"] + 1).float()
    batches = []
    for _ in range(cfg["steps"]):
        a = torch.randn(cfg["bs"], cfg["modes"], generator=g) * scale
        batches.append((a, torch.zeros(cfg["bs"])))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
