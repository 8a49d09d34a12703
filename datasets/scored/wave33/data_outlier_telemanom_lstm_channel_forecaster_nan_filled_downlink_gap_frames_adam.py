"""Spacecraft telemetry channel forecaster (telemanom-style LSTM, SMAP/MSL-like channels).

Mechanism: an LSTM reads a window of 40 telemetry frames (the channel value plus one-hot-ish
command flags) and predicts the next value; prediction errors are later thresholded for
anomaly detection. The ground-segment decommutator fills frames lost in a downlink gap (loss
of signal during a pass hand-over) with NaN instead of dropping them. The windows are cut
from the archive without a finiteness check, so one training batch (its position depends on
where the pass gap fell) carries NaN frames. Everything is calm before it; at that step the
NaN propagates through the LSTM, the MSE is NaN, and Adam writes NaN into every weight.

ORIGIN: ``encoder`` - the LSTM is the first module the corrupt frames reach; the corruption
itself is in the data, not in a layer.

Fix: drop windows containing non-finite frames before batching (the corrupt batch is
filtered, the rest of the run is identical).
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder"
SOURCE = ("Hundman et al. 2018 telemanom (LSTM telemetry forecasting, SMAP/MSL); known pattern "
          "of NaN-filled loss-of-signal frames in decommutated spacecraft telemetry reaching "
          "training and turning the loss and weights NaN.")


class TelemetryForecaster(nn.Module):
    def __init__(self, n_in, hidden, layers):
        super().__init__()
        self.encoder = nn.LSTM(n_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.encoder(x)
        return self.head(h[:, -1]).squeeze(-1)


def _windows(g, n, T=40, n_cmd=4):
    t0 = torch.rand(n, 1, generator=g) * 100
    t = t0 + torch.arange(T + 1).float() * 0.3
    period = 5.0 + torch.rand(n, 1, generator=g) * 2
    cmd = (torch.rand(n, T + 1, n_cmd, generator=g) < 0.05).float()
    level = torch.cumsum(cmd @ torch.tensor([0.3, -0.3, 0.2, -0.2]), 1) * 0.5
    v = torch.sin(2 * math.pi * t / period) + level + 0.05 * torch.randn(n, T + 1, generator=g)
    x = torch.cat([v[:, :T, None], cmd[:, 1:T + 1]], -1)
    y = v[:, T]
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 80
    bad_step = [23, 41, 57][seed % 3]
    model = TelemetryForecaster(5, hidden, layers)
    batches = []
    for i in range(steps):
        x, y = _windows(g, bs)
        if i == bad_step:
            # loss-of-signal gap: decommutator fills missing frames with NaN
            rows = torch.randperm(bs, generator=g)[: bs // 4]
            start = int(torch.randint(5, 30, (1,), generator=g))
            x[rows, start:start + 8, 0] = float("nan")
            if fixed:
                keep = torch.isfinite(x).all(-1).all(-1) & torch.isfinite(y)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
