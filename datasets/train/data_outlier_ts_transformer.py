"""data_outlier in a small transformer time-series forecaster (AdamW, MSE).

Mechanism: a sensor forecaster (standardised multichannel windows -> linear token projection +
learned positions -> one or two ``nn.TransformerEncoderLayer`` blocks, pre- or post-norm with the
seed -> a head on the last token) predicts the next reading of channel 0. It trains normally
until one batch, at a seed-dependent step in the middle of the run, carries one corrupt window:
a reading that is +-inf (a sensor's overflow value decoded as float), NaN (a dropped packet
stored as NaN), or a garbage float of 1e20-1e30 (bytes read with the wrong dtype), or
a target that is NaN. An inf or NaN reading becomes a NaN in the attention scores or the
LayerNorm of that sequence; a garbage reading makes the projected token ~1e20 or more, whose
square overflows float32 in the first LayerNorm's variance (or in the attention scores), which
return NaN; a NaN target makes the MSE NaN.
In every case the loss of that step is non-finite, the backward pass fills the gradients with
NaN and the AdamW step writes NaN into every weight, so the run never recovers.

ORIGIN is None: the failure starts in the batch (its inputs or its targets), not in a module;
the token projection only receives it.
Fixed: the same batches, with the corrupt value replaced by its clean one.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum and GitHub threads 'transformer loss becomes NaN after N iterations' on "
    "sensor / financial series traced to a single inf or NaN in the dataset (e.g. a division by "
    "zero in preprocessing, a sensor overflow value, missing data read as NaN); checking with "
    "torch.isfinite and dropping or repairing the record fixes it."
)


class Forecaster(nn.Module):
    def __init__(self, channels: int, d: int, seq: int, layers: int, norm_first: bool) -> None:
        super().__init__()
        self.proj = nn.Linear(channels, d)
        self.pos = nn.Parameter(0.02 * torch.randn(1, seq, d))
        layer = nn.TransformerEncoderLayer(
            d, nhead=4, dim_feedforward=2 * d, dropout=0.0, batch_first=True, norm_first=norm_first
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(self.proj(x) + self.pos)
        return self.head(h[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([2, 3, 4])
    d = rng.choice([16, 32, 48])
    seq = rng.choice([8, 12, 16])
    layers = rng.choice([1, 2])
    norm_first = rng.choice([True, False])
    batch = rng.choice([16, 32, 48])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([1e-3, 2e-3, 3e-3])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = rng.choice(["inf_reading", "nan_reading", "garbage_reading", "nan_target"])

    g = torch.Generator().manual_seed(160_000 + seed)
    # Channels: a few noisy sinusoids with random periods and phases, plus a lagged coupling.
    period = 6.0 + 10.0 * torch.rand(channels, generator=g)
    batches = []
    for step in range(steps):
        t0 = 100.0 * torch.rand(batch, 1, 1, generator=g)
        t = t0 + torch.arange(seq + 1, dtype=torch.float32).view(1, -1, 1)
        phase = 6.283 * torch.rand(batch, 1, channels, generator=g)
        amp = 0.7 + 0.6 * torch.rand(batch, 1, channels, generator=g)
        series = amp * torch.sin(6.283 * t / period + phase)
        series = series + 0.1 * torch.randn(batch, seq + 1, channels, generator=g)
        series[:, 1:, 0] += 0.4 * series[:, :-1, -1]
        x, y = series[:, :seq].clone(), series[:, seq, :1].clone()
        row = int(torch.randint(0, batch, (1,), generator=g))
        pos = int(torch.randint(0, seq, (1,), generator=g))
        col = int(torch.randint(0, channels, (1,), generator=g))
        sign = 1.0 if float(torch.rand(1, generator=g)) < 0.5 else -1.0
        garbage = sign * 10.0 ** (20.0 + 10.0 * float(torch.rand(1, generator=g)))
        if step == bad_step and not fixed:
            if kind == "inf_reading":
                x[row, pos, col] = sign * float("inf")
            elif kind == "nan_reading":
                x[row, pos, col] = float("nan")
            elif kind == "garbage_reading":
                x[row, pos, col] = garbage
            else:
                y[row, 0] = float("nan")
        batches.append((x, y))

    torch.manual_seed(seed)
    model = Forecaster(channels, d, seq, layers, norm_first)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
