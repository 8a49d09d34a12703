"""Conditional neural process (CNP) on 1-D station time series (daily cycles), where one
station-day in one batch carries a dropped reading that the ingest wrote as NaN.

Mechanism: each task is one station-day of normalised readings; a random subset is the
context set (encoded point-wise by a ReLU MLP on (x, y) and mean-pooled), a disjoint
subset is the target set (MSE of the decoder's predictive mean).  The logger of one
station occasionally drops a sample; the ingest script parses the empty field as NaN and
nothing masks it.  The run is calm and learning until the batch holding that station-day
arrives: the NaN enters encoder.0, the mean-pooling spreads it over the whole task
representation, the loss is NaN, backward writes NaN into every gradient and Adam writes
NaN into every weight, so all later steps are NaN too.  (A large-but-finite glitch in the
same place is absorbed by Adam: this failure is specifically the non-finite record.)

ORIGIN = "encoder.0": the first layer that consumes the corrupt context value; its output
is the first activation that is non-finite.

Fix: the same stream with the dropped reading cleaned (replaced by the true reading,
i.e. filled/masked at ingest); model, optimiser and all other data unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("Conditional Neural Processes (Garnelo et al. 2018) training recipe; the very common "
          "'loss suddenly becomes NaN at step N' forum reports traced to a single NaN/missing value in a "
          "sensor/time-series dataset that was not masked at ingest")


class CNP(nn.Module):
    def __init__(self, h, r, depth):
        super().__init__()
        enc = [nn.Linear(2, h), nn.ReLU()]
        for _ in range(depth - 1):
            enc += [nn.Linear(h, h), nn.ReLU()]
        enc += [nn.Linear(h, r)]
        self.encoder = nn.Sequential(*enc)
        dec = [nn.Linear(r + 1, h), nn.ReLU()]
        for _ in range(depth - 1):
            dec += [nn.Linear(h, h), nn.ReLU()]
        dec += [nn.Linear(h, 1)]
        self.decoder = nn.Sequential(*dec)

    def forward(self, xc, yc, xt):
        rep = self.encoder(torch.cat([xc, yc], -1)).mean(1)            # [B, r]
        z = torch.cat([rep[:, None, :].expand(-1, xt.shape[1], -1), xt], -1)
        return self.decoder(z)                                          # predictive mean


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    h = [64, 48, 64, 96][seed % 4]
    r = [64, 48, 32][seed % 3]
    depth = 2 + seed % 2
    bs = [32, 24, 32, 40][seed % 4]
    n_c = [10, 15, 20][seed % 3]
    n_t = 30
    steps = 200 + 20 * (seed % 3)
    lr = [2e-3, 1e-3, 1.5e-3][seed % 3]
    bad_step = 30 + (seed * 37) % 120
    noise = 0.1

    batches = []
    for s in range(steps):
        n = n_c + n_t
        x = torch.rand(bs, n, 1, generator=g) * 2 - 1
        # daily cycle: offset + amplitude * sin(pi x + phase), all in normalised units
        off = torch.randn(bs, 1, 1, generator=g)
        amp = 0.5 + torch.rand(bs, 1, 1, generator=g)
        ph = torch.rand(bs, 1, 1, generator=g) * 2 * math.pi
        y = off + amp * torch.sin(math.pi * x + ph)
        y = y + noise * torch.randn(bs, n, 1, generator=g)
        xc, yc, xt, yt = x[:, :n_c], y[:, :n_c].clone(), x[:, n_c:], y[:, n_c:]
        if s == bad_step and not fixed:
            # one station-day from the faulty logger: a dropped reading was written as NaN
            b = (s * 7 + seed) % bs
            yc[b, (s + seed) % n_c, 0] = float("nan")
        batches.append(((xc, yc, xt), yt))

    model = CNP(h, r, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
