"""Neural CDE frequency regressor whose vector-field output layer is drawn from N(0, 1).

Mechanism: the hidden state evolves as z_{k+1} = z_k + f(z_k) (X_{k+1} - X_k) with
f(z) = W_out relu(W_in z) reshaped to (hidden, channels) (Kidger et al. 2020, explicit
Euler over the piecewise-linear control path).  The user "gave the dynamics some life"
with ``nn.init.normal_(self.linear_out.weight)`` (std 1, no 1/sqrt(fan_in)).  With a
64-wide ReLU layer every Euler step multiplies the hidden state by ~(1 + c*sqrt(width)*|dX|),
so |z| grows geometrically with the number of control steps (the CDE's depth) from the very
first forward pass: predictions reach 1e10-1e15 and the MSE sits at 1e20-1e30.  Adam moves
each weight by ~lr per step, far too little to shrink a std-1 matrix, so the loss never
comes down.

ORIGIN is ``func.linear_out``: it is the only layer with the non-fan-in-scaled init and its
output matrix is what is multiplied into every step of the integration.

Fix: initialise ``linear_out`` with std 1/sqrt(fan_in) (the default Linear init scale).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "func.linear_out"
SOURCE = ("torchcde irregular time-series examples; Kidger et al. 2020 "
          "'Neural CDEs for irregular time series' - vector field re-initialised with "
          "nn.init.normal_ (std=1) instead of a fan-in-scaled init")


class CDEFunc(nn.Module):
    def __init__(self, channels, hidden, width, fixed):
        super().__init__()
        self.channels, self.hidden = channels, hidden
        self.linear_in = nn.Linear(hidden, width)
        self.linear_out = nn.Linear(width, hidden * channels)
        std = 1.0 / math.sqrt(width) if fixed else 1.0
        nn.init.normal_(self.linear_out.weight, 0.0, std)
        nn.init.zeros_(self.linear_out.bias)

    def forward(self, z):
        h = F.relu(self.linear_in(z))
        return self.linear_out(h).view(z.shape[0], self.hidden, self.channels)


class NeuralCDE(nn.Module):
    def __init__(self, channels, hidden, width, fixed):
        super().__init__()
        self.initial = nn.Linear(channels, hidden)
        self.func = CDEFunc(channels, hidden, width, fixed)
        self.readout = nn.Linear(hidden, 1)

    def forward(self, X):  # X: (B, L, C) control path, first channel is time
        z = self.initial(X[:, 0])
        dX = X[:, 1:] - X[:, :-1]
        for k in range(dX.shape[1]):
            z = z + torch.bmm(self.func(z), dX[:, k].unsqueeze(-1)).squeeze(-1)
        return self.readout(z).squeeze(-1)


def make_oscillators(n, length, g):
    """Irregularly sampled 2-D damped oscillators; target: standardised frequency."""
    t = torch.sort(torch.rand(n, length, generator=g), dim=1).values
    t[:, 0] = 0.0
    omega = 1.0 + 2.0 * torch.rand(n, 1, generator=g)
    phase = 2 * math.pi * torch.rand(n, 1, generator=g)
    amp = 0.5 + torch.rand(n, 1, generator=g)
    decay = torch.exp(-0.5 * t)
    x = amp * decay * torch.cos(2 * math.pi * omega * t + phase)
    y = amp * decay * torch.sin(2 * math.pi * omega * t + phase)
    xs = torch.stack([t, x, y], dim=-1)
    xs[..., 1:] += 0.02 * torch.randn(n, length, 2, generator=g)
    target = (omega.squeeze(1) - 2.0) / 0.58
    return xs, target


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(L=64, hidden=16, width=64, lr=5e-3, bs=32, steps=100),
           dict(L=80, hidden=24, width=48, lr=4e-3, bs=24, steps=110),
           dict(L=72, hidden=20, width=96, lr=5e-3, bs=48, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7 + seed)
    model = NeuralCDE(3, cfg["hidden"], cfg["width"], fixed)
    batches = [make_oscillators(cfg["bs"], cfg["L"], g) for _ in range(cfg["steps"])]
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(),
                batches=batches, steps=cfg["steps"])
