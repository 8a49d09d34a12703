"""data_outlier: a TCN sensor forecaster meets one batch with a logger glitch (1e6 spike or NaN).

Mechanism: a temporal convolutional network (Bai et al. 2018: a causal input conv, then 3-4
residual blocks of two dilated causal Conv1d with ReLU, dilations 1, 2, 4, 8, and a 1x1 output
conv) forecasts, at every time step, the next reading of C = 3-4 plant sensors (temperature,
pressure, flow: daily and process cycles plus AR(1) noise), trained with MSE and SGD with
momentum on windows of a standardised recording. Training is normal until one batch, at a
seed-dependent step in the middle of the run, contains windows that cross a data-logger glitch:
either a few readings stored as the logger's overflow value (1e6-1e7 in raw units, which the
standardisation with the clean statistics leaves at 1e5-1e7) or a stretch of readings logged as
NaN after a dropout. A NaN stretch makes the outputs and the loss NaN at once. A spike passes
the causal convs into every later step of the window (and is also the target of the step before
it): the loss of that batch is 1e9 or more, its gradient (error times input, both ~1e6) moves
the conv weights by orders of magnitude in one SGD step, and the next batches overflow to
inf/NaN.

ORIGIN is None: the failure starts in the data (the corrupt readings), not in a module; the
input conv only receives it.
Fixed: the same run with the glitch removed (the corrupt readings replaced by the clean
recording), i.e. the batch filtered before it reaches the model.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "Industrial sensor/SCADA logs where a logger writes an overflow sentinel (e.g. 999999) or "
    "NaN for a dropped reading, and forum reports of a forecaster's loss turning NaN in the "
    "middle of training from one such window; TCN architecture from Bai, Kolter & Koltun 2018."
)


class CausalConv(nn.Conv1d):
    def __init__(self, c_in: int, c_out: int, kernel: int, dilation: int) -> None:
        super().__init__(c_in, c_out, kernel, dilation=dilation)
        self.left = (kernel - 1) * dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(nn.functional.pad(x, (self.left, 0)))


class TemporalBlock(nn.Module):
    def __init__(self, channels: int, kernel: int, dilation: int) -> None:
        super().__init__()
        self.conv1 = CausalConv(channels, channels, kernel, dilation)
        self.relu1 = nn.ReLU()
        self.conv2 = CausalConv(channels, channels, kernel, dilation)
        self.relu2 = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.relu2(self.conv2(self.relu1(self.conv1(x))))


class TCN(nn.Module):
    def __init__(self, sensors: int, channels: int, kernel: int, levels: int) -> None:
        super().__init__()
        self.inp = CausalConv(sensors, channels, kernel, 1)
        self.blocks = nn.Sequential(*[TemporalBlock(channels, kernel, 2**i) for i in range(levels)])
        self.out = nn.Conv1d(channels, sensors, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.blocks(self.inp(x)))


def _recording(g: torch.Generator, sensors: int, length: int) -> torch.Tensor:
    t = torch.arange(length, dtype=torch.float32)
    rows = []
    for _ in range(sensors):
        period = 24.0 + 40.0 * float(torch.rand(1, generator=g))
        phase = 2 * math.pi * float(torch.rand(1, generator=g))
        cycle = torch.sin(2 * math.pi * t / period + phase)
        cycle = cycle + 0.5 * torch.sin(2 * math.pi * t / (period / 3.1) + 2 * phase)
        noise = torch.randn(length, generator=g)
        ar = torch.zeros(length)
        for i in range(1, length):  # AR(1) process noise, phi = 0.8
            ar[i] = 0.8 * ar[i - 1] + 0.3 * noise[i]
        rows.append(cycle + ar)
    raw = torch.stack(rows)
    return (raw - raw.mean(dim=1, keepdim=True)) / raw.std(dim=1, keepdim=True)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    sensors = rng.choice([3, 4])
    channels = rng.choice([12, 16, 24])
    kernel = rng.choice([2, 3])
    levels = rng.choice([3, 4])
    window = rng.choice([48, 64])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([120, 150, 180])
    lr = rng.choice([0.005, 0.01])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = "nan" if seed % 3 == 1 else "spike"  # two of three seeds: the overflow sentinel
    n_bad = rng.choice([1, 2, 4])

    g = torch.Generator().manual_seed(320_000 + seed)
    series = _recording(g, sensors, 4000)
    batches = []
    for step in range(steps):
        starts = torch.randint(0, series.shape[1] - window - 1, (batch,), generator=g).tolist()
        w = torch.stack([series[:, s : s + window + 1] for s in starts])
        pos = torch.randint(window // 4, window, (batch,), generator=g).tolist()
        chan = torch.randint(0, sensors, (batch,), generator=g).tolist()
        level = 10.0 ** (6.0 + torch.rand(batch, generator=g))  # overflow sentinel, raw units
        if step == bad_step and not fixed:
            w = w.clone()
            for row in range(n_bad):  # the first windows cross the glitch
                if kind == "spike":
                    w[row, chan[row], pos[row]] = level[row]
                else:
                    w[row, :, pos[row] : pos[row] + 5] = float("nan")
        batches.append((w[:, :, :-1], w[:, :, 1:]))

    torch.manual_seed(seed)
    model = TCN(sensors, channels, kernel, levels)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
