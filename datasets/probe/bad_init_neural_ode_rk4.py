"""Unrolled neural ODE (fixed-step RK4) classifier whose vector field is initialised with N(0, 1) weights.

Mechanism
---------
An encoder lifts 2-D points (three interleaved spirals) to a d-dim state h(0),
the state is integrated with n fixed RK4 steps of size dt = T/n through the
vector field ``f(h) = fc2(relu(fc1(h)))`` (module ``odefunc``), and a linear
head classifies h(T).  The run applies a "custom init" to the vector field:
``nn.init.normal_(w, 0, 1.0)`` for both of its Linear layers (the torchdiffeq
demo uses std 0.1; PyTorch's default is ~U(+-1/sqrt(fan_in))).

With std 1 and widths d = 24-32, hidden = 128-160, the Jacobian of the
piecewise-linear field f, W2 diag(relu') W1, has entries ~N(0, hidden/2) and
eigenvalues of modulus up to ~sqrt(d * hidden / 2) ~ 30-45, so z = lambda*dt
reaches ~5-7 with dt = T/n ~ 0.15-0.17.  One RK4 step multiplies such a mode by
its stability polynomial 1 + z + z^2/2 + z^3/6 + z^4/24 ~ 100-250, i.e. the
activation scale grows geometrically with the number of RK4 steps (the
"depth" of the unrolled ODE) from the very first forward pass.  Measured max
|h| on the first batch (seed 0): 2.0 -> 4.8e2 -> 8.8e4 -> 1.2e7 -> 1.5e9 ->
... -> 3.4e35 -> inf at RK4 step 17 of 20 (seed 1: inf at step 16 of 16;
seed 2: NaN at step 16 of 18),
so the logits and the loss are NaN at training step 0.  The vector field
``odefunc`` is the only badly initialised part; encoder and head use the
PyTorch defaults.

ORIGIN = "odefunc": the module whose weights are initialised far too large
(both of its Linear layers get the N(0,1) init).

fixed=True: ``odefunc``'s Linear layers get a fan-in-scaled init
(kaiming_uniform with a=sqrt(5), i.e. the PyTorch default, and the output layer
scaled by 0.1 as in many ODE-net codebases) -- nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "odefunc"
SOURCE = ("Neural ODEs (Chen et al. 2018, torchdiffeq) with fixed-step RK4; "
          "'neural ODE loss is nan / solver explodes' reports caused by large vector-field "
          "weights (stiff dynamics), and N(0,1) custom inits copied from tutorials")


class ODEFunc(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, h):
        return self.fc2(F.relu(self.fc1(h)))


class ODEClassifier(nn.Module):
    def __init__(self, d, hidden, n_steps, T, n_cls):
        super().__init__()
        self.encoder = nn.Linear(2, d)
        self.odefunc = ODEFunc(d, hidden)
        self.head = nn.Linear(d, n_cls)
        self.n_steps, self.dt = n_steps, T / n_steps

    def forward(self, x):
        h = self.encoder(x)
        dt = self.dt
        for _ in range(self.n_steps):
            k1 = self.odefunc(h)
            k2 = self.odefunc(h + 0.5 * dt * k1)
            k3 = self.odefunc(h + 0.5 * dt * k2)
            k4 = self.odefunc(h + dt * k3)
            h = h + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        return self.head(h)


def spirals(g, n, n_cls=3):
    y = torch.randint(0, n_cls, (n,), generator=g)
    r = torch.rand(n, generator=g)
    theta = 3.5 * r + 2 * math.pi * y / n_cls + 0.15 * torch.randn(n, generator=g)
    x = torch.stack([r * torch.cos(theta), r * torch.sin(theta)], 1) * 2.0
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(5000 + seed)
    d = [32, 24, 32][seed % 3]
    hidden = [128, 160, 128][seed % 3]
    n_steps = [20, 16, 18][seed % 3]
    T = [3.0, 2.5, 3.0][seed % 3]
    steps = 200
    batches = [spirals(g, 128) for _ in range(steps)]
    torch.manual_seed(seed)
    model = ODEClassifier(d, hidden, n_steps, T, 3)
    if fixed:
        for lin in (model.odefunc.fc1, model.odefunc.fc2):
            nn.init.kaiming_uniform_(lin.weight, a=math.sqrt(5))
            nn.init.zeros_(lin.bias)
        with torch.no_grad():
            model.odefunc.fc2.weight.mul_(0.1)
    else:
        for lin in (model.odefunc.fc1, model.odefunc.fc2):
            nn.init.normal_(lin.weight, 0.0, 1.0)
            nn.init.zeros_(lin.bias)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
