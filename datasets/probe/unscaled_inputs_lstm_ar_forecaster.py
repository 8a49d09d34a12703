"""unscaled_inputs: an autoregressive LSTM load forecaster (teacher forcing: the previous hour's
load plus sin/cos hour-of-day features in, next hour's load out) trained on raw kilowatt values.

Mechanism (the classic "my LSTM forecaster's loss won't go down" report; Brownlee, "How to Scale
Data for Long Short-Term Memory Networks"; many StackOverflow threads on LSTM regression of raw
prices/loads): the load channel is ~2000-4000 kW, so every LSTM gate pre-activation is in the
thousands; the sigmoid/tanh gates are pinned at 0/1 and the hidden state is a saturated +-1 pattern
that carries almost no information about the input. The targets are also raw kW, so the MSE is
~1e7 from step 0 and the linear head, reading a bounded hidden state, would need weights in the
hundreds to even reach the target level; with Adam's ~lr-sized steps the loss is still ~1e7 after
200 steps: a stall at a huge loss.

ORIGIN = "lstm": the first layer that consumes the raw load feature (its input-to-hidden weights
multiply the unscaled values and its gates saturate first); the head only inherits the problem.

fixed=True: the load series is standardised with the training-set statistics (mean 3000 kW, sd
900 kW) for both the input channel and the target. Model, optimiser, lr and data are the same.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "lstm"
SOURCE = ("LSTM time-series forecaster fed raw (un-normalised) load/price values: saturated gates, MSE ~1e7 "
          "that never decreases; fix = standardise inputs and targets (Brownlee 'How to scale data for LSTM')")

T, H = 48, 32


class ARForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, H, batch_first=True)
        self.head = nn.Linear(H, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(h).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    B, steps = 32, 200
    MU, SD = 3000.0, 900.0            # training-set statistics of the load series (kW)
    batches = []
    for _ in range(steps):
        base = 2000 + 2000 * torch.rand(B, 1, generator=g)
        daily = 400 + 600 * torch.rand(B, 1, generator=g)
        ph = torch.randint(0, 24, (B, 1), generator=g)
        hour = (torch.arange(T + 1) + ph) % 24
        load = base + daily * torch.sin(2 * math.pi * (hour - 6) / 24) + 60 * torch.randn(B, T + 1, generator=g)
        if fixed:
            load = (load - MU) / SD
        hs, hc = torch.sin(2 * math.pi * hour / 24), torch.cos(2 * math.pi * hour / 24)
        x = torch.stack([load[:, :-1], hs[:, 1:], hc[:, 1:]], -1)   # teacher forcing: true previous load
        batches.append((x, load[:, 1:]))
    model = ARForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
