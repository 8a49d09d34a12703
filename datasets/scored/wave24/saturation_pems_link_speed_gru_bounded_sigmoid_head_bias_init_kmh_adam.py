"""Freeway link-speed forecaster (PeMS / METR-LA style loop detectors): a GRU reads the last
12 five-minute intervals of standardised speed, occupancy and flow on the link and its
upstream/downstream neighbours plus time-of-day, and predicts the next-interval speed in
km/h through a physically bounded head ``v_max * sigmoid(z)`` (a speed can be neither
negative nor above the cap); L1 loss (MAE in km/h, the reporting metric), Adam.

Mechanism: following the 'initialise the output bias at the target mean' advice, the
practitioner set the head bias to the mean speed -- in km/h (~80-92) -- forgetting that it
sits *inside* the sigmoid and should be logit(mean / v_max). The pre-activation z starts at
~80-92, sigmoid(z) == 1.0 in float32, every prediction is v_max, and the sigmoid's
derivative (~e^-80 ~ 1e-35) multiplies every gradient of the GRU and the head; Adam's
epsilon swallows what is left, nothing moves, and the MAE stays at ~(v_max - mean speed)
for the whole run -- a stall, no non-finite value.

ORIGIN = "head": the Linear whose output is the saturated sigmoid's pre-activation; its bias
is what pins it (the GRU below is healthy but receives no gradient through it).

Fix: initialise the head bias at logit(mean_speed / v_max) so z starts O(1). Same model,
data, optimiser, lr and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "head"
SOURCE = ("Karpathy 'A Recipe for Training Neural Networks' (init the final bias to the target "
          "mean) misapplied under a bounded sigmoid head; PeMS/METR-LA speed forecasting GRUs; "
          "sigmoid saturation: Glorot & Bengio 2010, LeCun et al. 'Efficient BackProp'")


class BoundedSpeedGRU(nn.Module):
    def __init__(self, d_in, hidden, v_max):
        super().__init__()
        self.v_max = v_max
        self.gru = nn.GRU(d_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.v_max * torch.sigmoid(self.head(h[:, -1])).squeeze(1)


def _loops(g, n, T, v_free):
    tod = torch.rand(n, 1, generator=g)
    t = tod + torch.arange(T + 1).float() / 288
    rush = torch.exp(-0.5 * ((t - 0.33) / 0.04) ** 2) + torch.exp(-0.5 * ((t - 0.72) / 0.05) ** 2)
    sev = 0.3 + 0.6 * torch.rand(n, 1, generator=g)
    inc = (torch.rand(n, 1, generator=g) < 0.1).float() * 0.3 * (torch.arange(T + 1).float() > T * torch.rand(n, 1, generator=g)).float()
    drop = (sev * rush + inc).clamp(max=0.85)
    speed = v_free * (1 - drop) + 3 * torch.randn(n, T + 1, generator=g)
    up = v_free * (1 - 0.9 * drop.roll(1, 1)) + 3 * torch.randn(n, T + 1, generator=g)
    down = v_free * (1 - 1.1 * drop.roll(-1, 1).clamp(max=0.8)) + 3 * torch.randn(n, T + 1, generator=g)
    occ = 0.05 + 0.4 * drop + 0.02 * torch.randn(n, T + 1, generator=g)
    flow = 1800 * (1 - drop) * (0.5 + drop) + 50 * torch.randn(n, T + 1, generator=g)
    feats = torch.stack([speed, up, down, occ, flow, torch.sin(6.28 * t), torch.cos(6.28 * t)], 2)[:, :T]
    feats = (feats - feats.mean((0, 1))) / feats.std((0, 1))
    return feats, speed[:, T]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(10000 + seed)
    hidden = [32, 64, 48][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    v_max = [120.0, 130.0, 110.0][seed % 3]
    v_free = [105.0, 110.0, 95.0][seed % 3]
    T, steps = 12, 120
    x, y = _loops(g, steps * bs, T, v_free)
    mean_speed = y.mean().item()
    torch.manual_seed(seed)
    model = BoundedSpeedGRU(7, hidden, v_max)
    with torch.no_grad():
        if fixed:
            p = mean_speed / v_max
            model.head.bias.fill_(math.log(p / (1 - p)))
        else:
            model.head.bias.fill_(mean_speed)            # 'init bias to the target mean'
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
