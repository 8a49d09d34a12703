"""Multivariate sensor forecaster: LSTM encoder + additive (Bahdanau) attention pooling + linear head that
predicts the next 8 readings of all 6 sensors; MSE loss.  The standardised series is clean except for a
dropped stretch of sensor 3: 4 ticks were never masked and still hold the netCDF float fill value
(9.97e36).  They fall in the input/target windows of one mid-run batch (step 60-99); the squared error
overflows float32, the loss is inf and the inf/NaN gradient wrecks every weight from then on.
fixed=True: a range check flags the bad readings and forward-fills them (only that batch changes).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("sensor/climate forecasting reports of LSTM loss becoming inf/NaN because missing readings were "
          "left as unmasked fill/sentinel values (netCDF _FillValue 9.97e36, -9999, 1e6) in a few windows; "
          "usual fix: range-check and impute or drop the bad readings before windowing")

N_SENS, IN_LEN, HORIZON, BS = 6, 48, 8, 32
GLITCH = 9.96921e36  # netCDF default _FillValue for float


def make_series(gen, length):
    t = torch.arange(length, dtype=torch.float32)
    base = []
    for c in range(N_SENS):
        period = 20.0 + 9.0 * c
        phase = float(torch.rand(1, generator=gen)) * 2 * math.pi
        s = torch.sin(2 * math.pi * t / period + phase) + 0.5 * torch.sin(2 * math.pi * t / (3.1 * period))
        base.append(s)
    x = torch.stack(base, 1)
    mix = torch.eye(N_SENS) + 0.3 * torch.randn(N_SENS, N_SENS, generator=gen)
    x = x @ mix.T + 0.1 * torch.randn(length, N_SENS, generator=gen)
    return (x - x.mean(0)) / x.std(0)  # standardised on the clean data


def clean(series, limit=8.0):
    # range check: readings beyond +-limit std are invalid -> forward-fill from the last valid reading
    s = series.clone()
    bad = ~torch.isfinite(s) | (s.abs() > limit)
    for t in range(1, s.shape[0]):
        s[t] = torch.where(bad[t], s[t - 1], s[t])
    return s


class LSTMAttnForecaster(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.lstm = nn.LSTM(N_SENS, hidden, batch_first=True)
        self.attn = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.head = nn.Linear(2 * hidden, HORIZON * N_SENS)

    def forward(self, x):
        h, _ = self.lstm(x)                        # (B, T, H)
        w = torch.softmax(self.attn(h), dim=1)     # (B, T, 1)
        ctx = (w * h).sum(1)
        out = self.head(torch.cat([ctx, h[:, -1]], -1))
        return out.view(-1, HORIZON, N_SENS)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    steps = 150
    length = 6000
    series = make_series(gen, length)
    span = IN_LEN + HORIZON
    starts = torch.randint(0, length - span, (steps, BS), generator=gen)
    # the glitch: 4 unmasked fill values on sensor 3, inside the windows of batch `bad_step`
    bad_step = 60 + int(torch.randint(0, 40, (1,), generator=gen))
    t0 = int(starts[bad_step, 0]) + IN_LEN - 2
    hit = (starts + span > t0) & (starts < t0 + 4)
    hit[bad_step] = False
    while hit.any():  # shuffled sampler: the glitch ticks fall in batch `bad_step` only
        starts[hit] = torch.randint(0, length - span, (int(hit.sum()),), generator=gen)
        hit = (starts + span > t0) & (starts < t0 + 4)
        hit[bad_step] = False
    series[t0:t0 + 4, 3] = GLITCH
    if fixed:
        series = clean(series)
    batches = []
    for s in range(steps):
        idx = starts[s]
        win = torch.stack([series[i:i + IN_LEN + HORIZON] for i in idx.tolist()])
        batches.append((win[:, :IN_LEN], win[:, IN_LEN:]))
    model = LSTMAttnForecaster()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
