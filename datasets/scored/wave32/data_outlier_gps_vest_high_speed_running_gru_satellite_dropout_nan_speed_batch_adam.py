"""Next-minute high-speed-running distance from 10 Hz GPS-vest speed/acceleration windows with a
GRU regressor (wearable load monitoring).

Mechanism: the data is clean and standardised except for one session exported while the vest
had lost its satellite fix: the vendor CSV writes the lost samples as empty cells, which become
NaN speed/acceleration values.  That batch (its position depends on the seed) pushes NaN through
the GRU, so the loss of that step is NaN - the run is healthy up to that step.

ORIGIN: ``gru`` - the corrupt batch is an input problem; the first module it hits is the GRU,
where the NaN enters the activations.

Fix: the loader's validity filter - samples with non-finite values are dropped and the gap is
filled by carrying the last valid reading forward (the same batches, steps and model otherwise).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "gru"
SOURCE = ("Known pattern: GPS/GNSS athlete-tracking exports contain NaN/blank samples when the "
          "satellite fix is lost (Catapult/STATSports export notes; 'GPS dropout' handling in "
          "sports-science load-monitoring papers); a single NaN batch makes the loss NaN.")


class HSRForecaster(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.gru = nn.GRU(d_in, hidden, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hidden, hidden // 2), nn.ReLU(),
                                  nn.Linear(hidden // 2, 1))

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h[:, -1]).squeeze(-1)


def _data(g, n, T):
    base = 0.5 * torch.randn(n, 1, generator=g)
    bursts = (torch.rand(n, T, generator=g) < 0.08).float() * 2.0
    speed = base + torch.cumsum(0.1 * torch.randn(n, T, generator=g), 1) + bursts
    acc = torch.diff(speed, dim=1, prepend=speed[:, :1]) * 3.0
    hr = 0.6 * speed + 0.3 * torch.randn(n, T, generator=g)
    x = torch.stack([speed, acc, hr], -1)
    y = 0.8 * speed[:, -10:].mean(1) + 0.4 * bursts.mean(1) * 5 + 0.1 * torch.randn(n, generator=g)
    y = (y - y.mean()) / y.std()
    return x, y


def _ffill(xb):
    xb = xb.clone()
    for t in range(1, xb.shape[1]):
        bad = ~torch.isfinite(xb[:, t])
        xb[:, t][bad] = xb[:, t - 1][bad]
    return torch.nan_to_num(xb, nan=0.0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    hidden = [48, 64, 32][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    bad_step = [41, 57, 33][seed % 3]
    steps = 90
    T = 40
    model = HSRForecaster(3, hidden)
    x, y = _data(g, bs * steps, T)
    batches = []
    for i in range(steps):
        xb, yb = x[i * bs:(i + 1) * bs].clone(), y[i * bs:(i + 1) * bs]
        if i == bad_step:
            rows = torch.arange(0, bs, 3)
            start = 5 + seed
            xb[rows, start:start + 12, :2] = float("nan")   # fix lost: blank speed / acc cells
            if fixed:
                xb = _ffill(xb)
        batches.append((xb, yb))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
