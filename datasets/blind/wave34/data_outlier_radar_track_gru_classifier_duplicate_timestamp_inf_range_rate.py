"""Radar track classifier: a GRU over the last T scans of a confirmed radar track (range,
azimuth, RCS, range-rate, lateral velocity) that classifies the tracked object
(vehicle / two-wheeler / pedestrian / static).

Mechanism: range-rate is re-derived in the pre-processing as d(range)/dt between consecutive
scans.  In one logging session the radar ECU repeated a CAN timestamp (duplicate frame after a
bus-off recovery), so dt == 0 and the derived range-rate is +/-inf for the affected tracks.  Every
other batch is clean and the run is calm; the single batch that contains these tracks (its
position varies with the seed) makes the GRU input inf, the hidden state NaN and the loss
non-finite.

ORIGIN: ``gru`` - the first module the corrupt batch hits (the GRU input projection); the model
itself is fine, the start is the data.

Fix: filter the batch - drop/replace non-finite derived range-rates (here: the corrupt tracks
are replaced by their finite-difference over the previous valid dt, i.e. clean values).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "gru"
SOURCE = ("Known pattern: duplicated CAN/radar timestamps after bus-off recovery give dt=0 and "
          "inf finite-difference velocities; NaN/inf in a single batch poisons an RNN "
          "(cf. PyTorch forum 'GRU outputs NaN after some iterations' threads)")


class RadarTrackGRU(nn.Module):
    def __init__(self, n_in, hidden, n_cls):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, batch_first=True)
        self.cls = nn.Linear(hidden, n_cls)

    def forward(self, x):
        _, h = self.gru(x)
        return self.cls(h[-1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [48, 64, 32][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 48, 40][seed % 3]
    T = [12, 10, 16][seed % 3]
    steps = 120
    bad_step = [37, 58, 81][seed % 3]
    n_in, n_cls = 5, 4

    model = RadarTrackGRU(n_in, hidden, n_cls)
    speed = torch.tensor([1.2, 0.5, -0.6, -1.0])      # standardised class speed signature
    rcs = torch.tensor([1.0, -0.2, -1.0, 0.6])
    batches = []
    for step in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        t = torch.linspace(0, 1, T)
        rng = torch.randn(bs, 1, generator=g) + speed[y, None] * t[None] * 0.5
        az = 0.3 * torch.randn(bs, T, generator=g)
        rc = rcs[y, None] + 0.5 * torch.randn(bs, T, generator=g)
        rr = speed[y, None] + 0.3 * torch.randn(bs, T, generator=g)
        lat = 0.4 * torch.randn(bs, T, generator=g) * (y[:, None] == 1)
        x = torch.stack([rng, az, rc, rr, lat], -1)
        if step == bad_step and not fixed:
            rows = torch.arange(0, bs, 7)
            x[rows, T // 2, 3] = float("inf")            # d(range)/0
            x[rows[::2], T // 2, 3] = float("-inf")
        batches.append((x, y))

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
