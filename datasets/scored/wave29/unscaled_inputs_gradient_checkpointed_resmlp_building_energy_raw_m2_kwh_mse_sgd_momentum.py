"""Building-energy surrogate: a residual MLP (pre-activation residual blocks run through
``torch.utils.checkpoint`` to save activation memory, as in the large version of the same
code) regresses annual energy use with an MSE loss; SGD with momentum.

Mechanism: the features are fed in raw engineering units -- floor area in m^2 (300-20000),
year built (1900-2020), occupancy (0-800 people), setpoints in degC, U-values, glazing
ratio, heating degree-days (1500-5000) -- and the target is raw annual kWh (~1e4-1e6).
From step 0 the input projection's outputs are in the thousands and the squared error is
~1e12; its gradients are of the same enormous scale, so the very first SGD update moves the
weights by orders of magnitude more than their size and the next forward overflows to
inf/NaN.

ORIGIN: ``inp`` -- the input projection, the first module that receives the raw-unit
features and whose outputs are already thousands of times too large.

Fix: standardise the features and the target with statistics of the training data (z-score;
log of the skewed area/occupancy features and of the target first), same model, loss,
optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "unscaled_inputs"
ORIGIN = "inp"
SOURCE = ("Building-energy surrogate models (e.g. ASHRAE / BEM surrogates on raw engineering "
          "units); known pattern: features in m^2/years/people and kWh targets fed without "
          "standardisation, loss ~1e12 from step 0 (cs231n 'data preprocessing')")


class ResBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(F.gelu(x))))


class ResMLP(nn.Module):
    def __init__(self, n_in, d, depth):
        super().__init__()
        self.inp = nn.Linear(n_in, d)
        self.blocks = nn.ModuleList([ResBlock(d) for _ in range(depth)])
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = checkpoint(b, h, use_reentrant=False)
        return self.head(F.gelu(h)).squeeze(1)


def _raw_buildings(n, g):
    area = torch.exp(torch.empty(n).uniform_(5.7, 9.9, generator=g))          # m^2
    year = torch.randint(1900, 2021, (n,), generator=g).float()
    occ = area / torch.empty(n).uniform_(15, 40, generator=g)                  # people
    setpt = torch.empty(n).uniform_(19, 24, generator=g)                       # degC
    u_wall = torch.empty(n).uniform_(0.15, 2.5, generator=g)                   # W/m^2K
    glaz = torch.empty(n).uniform_(0.1, 0.8, generator=g)
    hdd = torch.empty(n).uniform_(1500, 5000, generator=g)                     # degree-days
    x = torch.stack([area, year, occ, setpt, u_wall, glaz, hdd], 1)
    eui = 60 + 0.02 * hdd * u_wall * (1 + glaz) + 4 * (setpt - 20) \
        + 0.03 * (2020 - year) + 25 * torch.randn(n, generator=g).clamp(-2, 2)
    y = area * eui.clamp_min(20)                                               # kWh / year
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(17000 + seed)
    d = [64, 96, 128][seed % 3]
    depth = [3, 4, 2][seed % 3]
    lr = [5e-3, 1e-2, 7.5e-3][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 150

    raw = [_raw_buildings(bs, g) for _ in range(steps)]
    if fixed:
        X = torch.cat([r[0] for r in raw])
        Y = torch.cat([r[1] for r in raw])
        logcols = [0, 2]

        def tf(x):
            x = x.clone()
            x[:, logcols] = torch.log(x[:, logcols])
            return x
        Xt = tf(X)
        mu, sd = Xt.mean(0), Xt.std(0)
        ly = torch.log(Y)
        ym, ys = ly.mean(), ly.std()
        batches = [((tf(x) - mu) / sd, (torch.log(y) - ym) / ys) for x, y in raw]
    else:
        batches = raw

    torch.manual_seed(seed)
    model = ResMLP(7, d, depth)
    def loss_fn(out, y):
        return F.mse_loss(out, y)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
