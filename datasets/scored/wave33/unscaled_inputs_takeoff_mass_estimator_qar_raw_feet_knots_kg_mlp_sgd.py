"""Take-off mass estimator from QAR/FDM take-off-roll parameters (MLP, SGD), raw units.

Mechanism: a flight-operations analytics team estimates the actual take-off mass (to check
load-sheet errors) from quick-access-recorder parameters of the take-off roll: ground-roll
distance [ft], rotation speed [kt], N1 [%], outside air temperature [degC], pressure altitude
[ft], flap setting [deg], head-wind component [kt], runway slope [%]. The columns are fed as
recorded, and the target is the mass in kg (~50 000-80 000). The inputs span 1e0-1e4 and the
target 1e4-1e5: the first-layer pre-activations are in the thousands, the initial MSE is
~4e9 and its gradient w.r.t. the weights ~1e8. The very first SGD step overshoots by orders of
magnitude and the loss overflows to inf/NaN within a few steps.

ORIGIN: ``regressor.0`` - the first Linear receives the unscaled columns; that is where the
huge pre-activations and gradients start.

Fix: standardise every input column and the target with the training-set mean and std
(the loss is then in standardised units); model, optimiser, lr and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "regressor.0"
SOURCE = ("Known pattern: raw engineering units fed to an SGD-trained regressor diverge at once "
          "(LeCun et al. 'Efficient BackProp' Sec. 4.3 on input normalisation); take-off weight "
          "estimation from flight-data-monitoring / QAR records (e.g. Sun et al. 2018, "
          "aircraft take-off mass from ADS-B/FDM data).")


def _takeoffs(g, n):
    mass = 50000 + 30000 * torch.rand(n, generator=g)                 # kg
    oat = -10 + 45 * torch.rand(n, generator=g)                        # degC
    palt = 6000 * torch.rand(n, generator=g) ** 2                      # ft
    flap = torch.tensor([5.0, 10.0, 15.0])[torch.randint(0, 3, (n,), generator=g)]
    wind = torch.randn(n, generator=g) * 8                             # kt head-wind
    slope = torch.randn(n, generator=g) * 0.5                          # %
    n1 = 88 + 0.15 * oat + 0.0008 * palt + 0.00004 * (mass - 65000) + torch.randn(n, generator=g) * 0.5
    density = (1 - 6.9e-6 * palt) ** 4.26 * 288.15 / (273.15 + oat)
    vr = 1.2 * torch.sqrt(mass * 9.81 / (0.5 * 1.225 * density * 122.6 * (1.4 + 0.02 * flap))) * 1.944
    roll = (mass / 65000) ** 2 / density * (4200 - 40 * flap) * (1 + 0.06 * slope) - 30 * wind
    roll = roll + torch.randn(n, generator=g) * 80
    x = torch.stack([roll, vr, n1, oat, palt, flap, wind, slope], 1)
    return x, mass[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(737 + seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [1e-2, 5e-3, 2e-2][seed % 3]
    bs = [64, 32, 128][seed % 3]
    steps = 150
    x, y = _takeoffs(g, bs * steps)
    if fixed:
        x = (x - x.mean(0)) / x.std(0)
        y = (y - y.mean(0)) / y.std(0)
    layers, d = [], 8
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    model = nn.Sequential()
    model.add_module("regressor", nn.Sequential(*layers))
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
