"""Yards after contact for the ball carrier from the last frames of player-tracking data, with a
1-D temporal CNN over per-frame features (carrier speed/acceleration, nearest-defender distance
and closing speed), MSE and SGD with momentum.

Mechanism: the tracking feed occasionally swaps two player IDs for a frame; the carrier then
"teleports" across the field and the speed derived by differencing positions is hundreds of
standard deviations above normal.  One batch (its position depends on the seed) contains such
plays.  Its forward pass gives predictions ~1e2-1e3 off, the MSE gradient is huge, one SGD
momentum step blows the conv weights up and the loss overflows to inf/NaN within a step or two.

ORIGIN: ``encoder.0`` - the corrupt values are inputs; the first module they hit (and whose
weights receive the x-scaled gradient first) is the first Conv1d.

Fix: filter the batch - the feature pipeline caps speeds/accelerations at the physical limit
(a player cannot exceed ~12 m/s), which clips the ID-swap frames back into range.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("Known pattern: identity switches in optical/RFID player tracking (NFL Big Data Bowl "
          "discussions of 'teleporting' players and impossible speeds; MOT ID-switch literature) "
          "produce extreme derived speeds; one such batch diverges an SGD-trained regressor.")

SPEED_CAP = 4.0   # standardised units, ~12 m/s


class YACNet(nn.Module):
    def __init__(self, c_in, ch):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(c_in, ch, 3, padding=1), nn.ReLU(),
                                     nn.Conv1d(ch, ch, 3, padding=1), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(ch, ch // 2), nn.ReLU(), nn.Linear(ch // 2, 1))

    def forward(self, x):             # (B, C, T)
        return self.head(self.encoder(x).mean(-1)).squeeze(-1)


def _data(g, n, T):
    spd = 0.8 * torch.randn(n, 1, generator=g) + 0.2 * torch.randn(n, T, generator=g)
    acc = torch.diff(spd, dim=1, prepend=spd[:, :1]) * 2
    dist = torch.randn(n, 1, generator=g) + 0.3 * torch.cumsum(0.2 * torch.randn(n, T, generator=g), 1)
    close = -torch.diff(dist, dim=1, prepend=dist[:, :1]) * 3
    x = torch.stack([spd, acc, dist, close], 1)
    y = 0.7 * spd[:, -3:].mean(1) + 0.5 * torch.relu(dist[:, -1]) - 0.3 * close.mean(1)
    y = y + 0.2 * torch.randn(n, generator=g)
    return x, (y - y.mean()) / y.std()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    ch = [32, 48, 64][seed % 3]
    lr = [0.02, 0.01, 0.015][seed % 3]
    bs = [32, 48, 24][seed % 3]
    bad_step = [28, 45, 36][seed % 3]
    steps = 100
    T = 12
    model = YACNet(4, ch)
    x, y = _data(g, bs * steps, T)
    batches = []
    for i in range(steps):
        xb, yb = x[i * bs:(i + 1) * bs].clone(), y[i * bs:(i + 1) * bs]
        if i == bad_step:
            rows = torch.arange(1, bs, 5)
            frame = 4 + seed
            xb[rows, 0, frame] = 250.0 + 50.0 * seed    # ID swap: carrier jumps ~30 yards in 0.1 s
            xb[rows, 1, frame] = 500.0
            xb[rows, 1, frame + 1] = -500.0
            if fixed:
                xb[:, :2] = xb[:, :2].clamp(-SPEED_CAP, SPEED_CAP)
        batches.append((xb, yb))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
