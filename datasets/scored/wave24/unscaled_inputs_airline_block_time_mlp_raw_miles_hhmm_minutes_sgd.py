"""Airline scheduled block-time estimator (BTS on-time data style): an MLP predicts the
actual gate-to-gate block time in minutes from the flight's great-circle distance (miles),
scheduled departure time as HHMM (e.g. 1745), day of year, aircraft seat count, origin hub
congestion (departures/hour) and the route's prevailing-wind component (knots); MSE, SGD.

Mechanism: the features go in as read from the CSV -- miles 100-2700, HHMM 500-2359, day of
year 1-365, seats 50-350, departures/hour 10-120 -- and the target is raw minutes (40-400).
The first Linear's pre-activations are ~1e2-1e3 at step 0, the prediction is off by
hundreds of minutes, the MSE is ~1e4-1e5 and its gradient w.r.t. the first-layer weights is
(error ~1e2) x (input ~1e3) ~ 1e5 per weight, so the very first SGD steps blow the
weights up and the loss overflows to inf/NaN within a few steps.

ORIGIN = "net.0": the first Linear is where the unscaled features enter; its pre-activations
and weight gradients are the ones ~1e3x too large, and everything downstream inherits them.

Fix: standardise every input feature and the target (z-scores from the training set,
inverse-transform at prediction time). Same model, optimiser, lr and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("BTS Airline On-Time Performance (DISTANCE, CRS_DEP_TIME as HHMM, ACTUAL_ELAPSED_TIME); "
          "scikit-learn docs 'Importance of feature scaling'; LeCun et al. 'Efficient BackProp' "
          "Sec. 4.3 (normalise the inputs)")


def _flights(g, n):
    miles = 100 + 2600 * torch.rand(n, generator=g) ** 1.5
    hhmm_h = torch.randint(5, 24, (n,), generator=g).float()
    hhmm_m = torch.randint(0, 12, (n,), generator=g).float() * 5
    hhmm = hhmm_h * 100 + hhmm_m
    doy = torch.randint(1, 366, (n,), generator=g).float()
    seats = 50 + 300 * torch.rand(n, generator=g)
    deps = 10 + 110 * torch.rand(n, generator=g)
    wind = 40 * torch.randn(n, generator=g)
    dep_hour = hhmm_h + hhmm_m / 60
    cruise_kt = 430 + 0.05 * seats
    minutes = (35 + 60 * miles / (cruise_kt * 1.15 - 0.8 * wind).clamp(min=250) + 0.12 * deps
               + 6 * torch.exp(-0.5 * ((dep_hour - 18) / 2) ** 2) + 4 * torch.cos(6.2832 * doy / 365)
               + 4 * torch.randn(n, generator=g))
    x = torch.stack([miles, hhmm, doy, seats, deps, wind], 1)
    return x, minutes.unsqueeze(1)


class BlockTimeMLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(13000 + seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [64, 128, 96][seed % 3]
    lr = [1e-2, 5e-3, 2e-2][seed % 3]
    steps = 150
    x, y = _flights(g, steps * bs)
    if fixed:
        x = (x - x.mean(0)) / x.std(0)
        y = (y - y.mean()) / y.std()
    torch.manual_seed(seed)
    layers, d = [], 6
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    model = BlockTimeMLP(layers + [nn.Linear(d, 1)])
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
