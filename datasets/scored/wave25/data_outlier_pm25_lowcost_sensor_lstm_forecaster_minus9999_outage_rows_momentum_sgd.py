"""Air-quality estimation: LSTM next-hour PM2.5 forecaster fed by a low-cost sensor network.

Domain: a city air-quality team forecasts next-hour PM2.5 at each low-cost sensor from the
previous 12 hours of PM2.5, temperature, relative humidity and wind speed. Inputs and the target
are standardised with statistics computed on a clean month (mean 25 ug/m3, sd 10 for PM2.5).
The network is a one-layer LSTM + linear head trained with momentum SGD and MSE.

Mechanism: the data feed encodes a sensor outage / failed QC as -9999 (the missing-value code
used by many AQ data portals) instead of NaN, and the loader does not filter it. When one
sensor's outage day fills half of a batch (at a seed-dependent step, 7-10), its standardised
PM2.5 history is about -1000 sigma and its standardised target about -1000. That batch's MSE is
~2.5e5 and its gradient thousands of times the usual one; with momentum the step is repeated
for ~10 steps. The LSTM input weights of the PM2.5 channel and the head weights are thrown
to huge values: the gates saturate for ordinary inputs, the hidden state no longer carries the
history, and the head oscillates around a large constant. The loss never comes back below its
starting level while the same run without the outage rows converges.

ORIGIN: "lstm" -- the first module the corrupt rows reach (their -1000 sigma history drives the
LSTM gates into saturation); the sentinel targets hit the loss at the same step.

Fix: drop rows carrying the -9999 outage code (in history or target) before batching, the QC
step the pipeline skipped; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "lstm"
SOURCE = ("AirNow / OpenAQ style missing-value codes (-999 / -9999) left in low-cost sensor "
          "(PurpleAir) feeds and ingested as numbers instead of NaN (a routine AQ data-cleaning "
          "pitfall); one huge-gradient batch wrecking an LSTM trained with momentum SGD")

SENTINEL = -9999.0


class PMForecaster(nn.Module):
    def __init__(self, n_feat, hidden):
        super().__init__()
        self.lstm = nn.LSTM(n_feat, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(h[:, -1]).squeeze(-1)


def _series(g, n, T):
    # hourly PM2.5 with diurnal cycle + humidity effect + AR(1) noise (ug/m3)
    t0 = torch.randint(0, 24, (n, 1), generator=g).float()
    hours = t0 + torch.arange(T + 1).float()
    base = 18 + 10 * torch.rand(n, 1, generator=g)
    diurnal = 8 * torch.sin(2 * torch.pi * (hours - 7) / 24)
    rh = 55 + 20 * torch.sin(2 * torch.pi * (hours - 3) / 24) + 5 * torch.randn(n, T + 1, generator=g)
    temp = 15 + 6 * torch.sin(2 * torch.pi * (hours - 14) / 24) + torch.randn(n, T + 1, generator=g)
    wind = (3 + 1.5 * torch.randn(n, 1, generator=g)).clamp(0.3) + 0.5 * torch.randn(n, T + 1, generator=g)
    pm = base + diurnal + 0.15 * (rh - 55) - 2.0 * (wind - 3)
    noise = torch.zeros(n, T + 1)
    e = 2.0 * torch.randn(n, T + 1, generator=g)
    for k in range(1, T + 1):
        noise[:, k] = 0.8 * noise[:, k - 1] + e[:, k]
    pm = (pm + noise).clamp_min(1.0)
    feats = torch.stack([pm[:, :T], temp[:, :T], rh[:, :T], wind[:, :T]], -1)
    return feats, pm[:, T]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 24][seed % 3]
    batch = [32, 48, 40][seed % 3]
    lr = [5e-2, 4e-2, 6e-2][seed % 3]
    T = 12
    steps = 160
    bad_step = [7, 10, 8][seed % 3]

    mu = torch.tensor([25.0, 15.0, 55.0, 3.0])
    sd = torch.tensor([10.0, 4.5, 15.0, 1.6])

    batches = []
    for s in range(steps):
        x, y = _series(g, batch, T)
        if s == bad_step:
            # one sensor's outage day: its rows carry the -9999 code in PM history and target
            n_bad = batch // 2
            x[:n_bad, :, 0] = SENTINEL
            y[:n_bad] = SENTINEL
            if fixed:
                keep = (x[:, :, 0] != SENTINEL).all(1) & (y != SENTINEL)
                x, y = x[keep], y[keep]
        batches.append(((x - mu) / sd, (y - mu[0]) / sd[0]))

    model = PMForecaster(4, hidden)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
