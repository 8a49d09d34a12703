"""Neural-network emulator of a longwave radiation parameterisation (Krasnopolsky et al.
2005 style: one wide tanh hidden layer mapping a column's temperature, humidity, ozone,
cloud and pressure profiles to per-level heating rates).  The column profiles are fed in
their native units: temperature in K (200-310), pressure in Pa (1e4-1.03e5).

Mechanism
---------
The heating-rate targets are standardised per level, but the inputs are not.  Pressures
of 1e4-1e5 Pa and temperatures of ~250 K enter the hidden layer through weights of size
~1/sqrt(fan_in) ~ 0.1, so every hidden pre-activation is of order 1e2-1e4 with the same
sign for every column (these inputs are always large and positive).  ``tanh`` returns
exactly +-1.0 in float32 for |x| > ~9, its derivative is exactly 0, and the hidden layer
is a constant vector independent of the column: the first layer gets no gradient at all
and the output layer can only learn the per-level mean.  After a few Adam steps the MSE
sits at the target variance (~1.0) and never moves -- a textbook saturation plateau.

ORIGIN
------
``net.1``: the Tanh hidden activation that saturates; ``net.0`` only forms the huge
pre-activations from the raw Pa/K inputs.

Fix
---
Standardise each input feature with training-set mean/std (the emulator papers normalise
all inputs); same network, init, optimiser and batches.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Krasnopolsky, Fox-Rabinovitz & Chalikov 2005 (NN emulation of NCAR CAM longwave "
          "radiation, tanh MLP); later ML radiation emulators; raw Pa/K profile inputs")


def _columns(g, n, L):
    sig = torch.linspace(1.0, 0.1, L)                        # sigma levels
    ps = 98000.0 + 5000.0 * torch.rand(n, 1, generator=g)    # surface pressure, Pa
    p = ps * sig                                             # Pa
    Ts = 270.0 + 35.0 * torch.rand(n, 1, generator=g)        # K
    lapse = 5.0 + 3.0 * torch.rand(n, 1, generator=g)        # K per sigma-km proxy
    T = (Ts - lapse * 7.0 * (1 - sig) * 1.3).clamp(min=200.0)
    T = T + 1.5 * torch.randn(n, L, generator=g)
    rh = torch.rand(n, 1, generator=g) * 0.8 + 0.1
    q = rh * 0.015 * torch.exp(-(1 - sig) * 4.0) * torch.exp((T - 288.0) / 15.0)   # kg/kg
    o3 = 1e-6 * (1 + 8 * (1 - sig) ** 3) * (1 + 0.2 * torch.rand(n, 1, generator=g))
    cld = (torch.rand(n, L, generator=g) < 0.2).float() * torch.rand(n, L, generator=g)
    x = torch.cat([T, p, q, o3, cld, Ts, ps], dim=1)
    # longwave cooling: emission ~ T^4, water-vapour and cloud effects, lapse rate
    emis = (T / 250.0) ** 4
    dT = torch.diff(T, dim=1, prepend=Ts)
    hr = -1.5 * emis * (1 + 40 * q) + 0.08 * dT + 1.2 * cld * (1 - sig) - 0.3 * (ps - 1e5) / 5000
    hr = hr + 0.05 * torch.randn(n, L, generator=g)
    return x, hr


class RadiationEmulator(nn.Module):
    def __init__(self, n_in, hidden, n_out):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, n_out))

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(L=12, H=96, B=64, lr=2e-3, steps=100),
           dict(L=16, H=64, B=48, lr=3e-3, steps=90),
           dict(L=10, H=128, B=96, lr=1e-3, steps=120)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2005 + seed)
    n = cfg["B"] * cfg["steps"]
    X, Y = _columns(g, n, cfg["L"])
    Y = (Y - Y.mean(0)) / Y.std(0)                           # standardised heating rates
    if fixed:
        X = (X - X.mean(0)) / X.std(0)                       # FIX: standardise the inputs
    net = RadiationEmulator(X.shape[1], cfg["H"], cfg["L"])
    opt = torch.optim.Adam(net.parameters(), lr=cfg["lr"])
    B = cfg["B"]
    batches = [(X[i * B:(i + 1) * B], Y[i * B:(i + 1) * B]) for i in range(cfg["steps"])]
    return dict(model=net, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
