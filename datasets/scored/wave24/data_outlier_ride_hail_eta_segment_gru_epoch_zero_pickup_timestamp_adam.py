"""Ride-hailing ETA regressor: a GRU reads the matched route as a sequence of road segments
(standardised length, free-flow speed, lanes, signalised flag, turn angle, time-of-day sin/cos)
and regresses the trip duration in minutes, standardised with fleet statistics
(mean/std of the clean trip history); MSE, Adam.

Mechanism: a quarter to a third of the trips in one early batch (an app release that lost the pickup event, so
``pickup_ts`` defaulted to Unix epoch 0) have duration = dropoff_ts - 0 ~ 1.7e9 s, i.e. a
standardised target of ~3.5e6. That single step produces a gradient ~1e6x the normal one.
Adam's first moment forgets it in ~10 steps, but the second moment (beta2 = 0.999) keeps
~0.001 * g_big^2 for thousands of steps: the kick moves the weights the wrong way for a few
steps and afterwards every ordinary gradient is divided by sqrt(v) ~ 1e3-1e4x too large, so
the effective step size is ~1e-4 of the intended one and the loss never comes back down --
the run stalls without any non-finite value.

ORIGIN = None: the corruption is in the targets of one batch and enters through the loss; no
module is where it starts (every parameter's Adam state is poisoned at once).

Fix: filter the batch -- drop trips whose duration is outside [1, 240] minutes before
standardising (the usual sanity filter on trip logs). Same model, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("NYC TLC / ride-hailing trip logs with epoch-0 or missing pickup timestamps giving "
          "absurd durations; known Adam failure where one huge-gradient batch inflates the "
          "second-moment estimate (beta2=0.999) and freezes learning")


class SegmentGRUETA(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.embed = nn.Linear(d_in, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, seg):
        h, _ = self.gru(torch.relu(self.embed(seg)))
        return self.head(h[:, -1]).squeeze(1)


def _trips(g, n, L, d):
    seg = torch.randn(n, L, d, generator=g)
    length = torch.exp(0.5 * seg[..., 0])                      # km-ish, positive
    speed = 30 + 10 * torch.sigmoid(seg[..., 1]) * (1 + 0.3 * seg[..., 2])
    rush = 1 + 0.4 * torch.relu(seg[:, 0, 5]).unsqueeze(1)     # time of day on first segment
    minutes = (60 * length / speed * rush + 0.3 * (seg[..., 3] > 0.5)).sum(1)
    minutes = minutes + 0.5 * torch.randn(n, generator=g)
    return seg, minutes


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(4000 + seed)
    hidden = [48, 64, 32][seed % 3]
    L = [14, 12, 16][seed % 3]
    bs = [128, 160, 192][seed % 3]
    lr = [3e-3, 5e-3, 4e-3][seed % 3]
    bad_step = [5, 3, 6][seed % 3]
    steps = 120
    d = 7
    torch.manual_seed(seed)
    model = SegmentGRUETA(d, hidden)
    seg, minutes = _trips(g, steps * bs, L, d)
    mu, sd = minutes.mean().item(), minutes.std().item()     # fleet statistics (clean history)
    batches = []
    for i in range(steps):
        x, m = seg[i * bs:(i + 1) * bs], minutes[i * bs:(i + 1) * bs].clone()
        if i == bad_step:
            k = bs // 4 + int(torch.randint(0, bs // 8, (1,), generator=g))   # one driver-app cohort
            rows = torch.randperm(bs, generator=g)[:k]
            dropoff_ts = 1.7e9 + 1e6 * torch.rand(k, generator=g)
            m[rows] = (dropoff_ts - 0.0) / 60.0                # pickup_ts defaulted to 0
        if fixed:
            keep = (m >= 1) & (m <= 240)
            x, m = x[keep], m[keep]
        batches.append((x, (m - mu) / sd))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
