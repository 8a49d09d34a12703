"""Vessel speed-over-ground forecaster from AIS: a 2-layer LSTM reads the last 48 AIS
reports of a ship (standardised SOG, sin/cos COG, rate of turn, distance to port, draught)
and a linear head predicts the next 6 SOG values (standardised); MSE, plain SGD, no
gradient clipping.

Mechanism: the learning rate (4.5-6) was carried over from a sweep for a different setup
(a summed-over-horizon loss on a tiny linear baseline) and is ~100x what this model
tolerates. The head's effective curvature is ~hidden * E[h^2]; once the LSTM states become
coherent (a few steps in) the SGD steps overshoot, every step multiplies the error instead
of shrinking it, the weights grow geometrically and the loss overflows to inf/NaN within a
few tens of steps. Update/weight ratios are ~1e-1-1 from the first steps.

ORIGIN = None: an optimiser hyper-parameter; every layer takes oversized steps, no module
is the start.

Fix: lr = 0.05 (with the same SGD, model, data and steps).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("AIS SOG/ETA forecasting LSTMs (e.g. vessel ETA prediction with recurrent nets); "
          "Goodfellow et al. Deep Learning 8.2/11.4: too-high learning rate makes the loss "
          "increase geometrically; PyTorch forum 'LSTM loss becomes nan with SGD lr=1'")


def _voyages(g, n, T, H):
    t = torch.arange(T + H).float()
    cruise = 10 + 6 * torch.rand(n, 1, generator=g)
    # approach to port: deceleration starting at a random time, plus weather noise
    t0 = (T * 0.5 + (T + H) * 0.6 * torch.rand(n, 1, generator=g))
    decel = torch.sigmoid((t - t0) / (3 + 3 * torch.rand(n, 1, generator=g)))
    sog = cruise * (1 - 0.8 * decel) + 0.6 * torch.randn(n, T + H, generator=g).cumsum(1) / math.sqrt(T)
    cog = 6.28 * torch.rand(n, 1, generator=g) + 0.1 * torch.randn(n, T + H, generator=g).cumsum(1) / math.sqrt(T)
    rot = torch.diff(cog, dim=1, prepend=cog[:, :1])
    dist = torch.relu(t0 - t) * cruise / 60
    draught = (8 + 4 * torch.rand(n, 1, generator=g)).expand(-1, T + H)
    feats = torch.stack([sog, torch.sin(cog), torch.cos(cog), rot, dist, draught], 2)
    mu, sd = feats.mean((0, 1)), feats.std((0, 1))
    feats = (feats - mu) / sd
    return feats[:, :T], feats[:, T:, 0]


class SOGForecaster(nn.Module):
    def __init__(self, d, hidden, H):
        super().__init__()
        self.lstm = nn.LSTM(d, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, H)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(h[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(7000 + seed)
    hidden = [64, 48, 96][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr_bad = [4.5, 6.0, 5.0][seed % 3]
    T, H, steps = 48, 6, 80
    torch.manual_seed(seed)
    model = SOGForecaster(6, hidden, H)
    x, y = _voyages(g, steps * bs, T, H)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else lr_bad)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
