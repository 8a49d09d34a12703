"""Vessel trajectory prediction from AIS: a 1-D conv + GRU model reads 12 past displacements of a
ship (local ENU metres per 1-minute report, divided by a 200 m scale) and predicts the next 6
displacements, trained with MSE and momentum SGD. AIS receivers occasionally decode a position
report as lat=0, lon=0 ('Null Island') when the GPS fix is lost; one batch of the training set
(step 130 of an otherwise calm run) contains two tracks with such a report in the middle of the
history and target. In local ENU that is a jump of ~5000 km, i.e. displacements of ~2.5e4 scale
units where the rest of the data is O(1): the squared error is ~1e9, the single SGD step it
causes throws the conv/GRU weights far off, and the run never returns to its previous loss (the
loss explodes or stays far above where it was). Fixed: the glitched reports are filtered out (the
two tracks are dropped from that batch); nothing else changes."""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "conv"
SOURCE = ("AIS 'Null Island' (0,0) position reports from lost GPS fixes (well known in AIS data "
          "cleaning, e.g. MarineCadastre/Danish Maritime Authority feeds); unfiltered outlier batch")

T_IN, T_OUT, SCALE = 12, 6, 200.0
BAD_STEP = 130


class TrackPredictor(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.conv = nn.Conv1d(2, 32, kernel_size=3, padding=1)
        self.gru = nn.GRU(32, hidden, batch_first=True)
        self.head = nn.Linear(hidden, T_OUT * 2)

    def forward(self, hist):
        f = torch.relu(self.conv(hist.transpose(1, 2))).transpose(1, 2)
        _, h = self.gru(f)
        return self.head(h[-1]).view(-1, T_OUT, 2)


def synth_tracks(g, B):
    speed = (4 + 8 * torch.rand(B, generator=g)) * 0.514 * 60          # knots -> metres per minute
    course = torch.rand(B, generator=g) * 2 * math.pi
    rot = torch.randn(B, generator=g) * 0.03 * (torch.rand(B, generator=g) < 0.4).float()
    t = torch.arange(T_IN + T_OUT).float()
    ang = course[:, None] + rot[:, None] * t
    d = torch.stack([torch.sin(ang), torch.cos(ang)], -1) * speed[:, None, None] / SCALE
    d = d + 0.03 * torch.randn(d.shape, generator=g)
    return d


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TrackPredictor()
    steps = 160
    batches = []
    for step in range(steps):
        d = synth_tracks(g, 64)
        if step == BAD_STEP:
            # report k of a track decoded at (0,0): ENU jump of ~5,000 km away and back
            for b, k in ((5, 8), (37, 13)):
                jump = torch.tensor([-3.1e6, -4.2e6]) / SCALE
                d[b, k] += jump
                d[b, k + 1] -= jump
            if fixed:
                keep = d.abs().amax((1, 2)) < 100.0
                d = d[keep]
        batches.append((d[:, :T_IN], d[:, T_IN:]))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
