"""unscaled_inputs: a 1-D CNN vibration regressor fed raw accelerometer ADC counts and a raw-count
target (SGD with momentum or Nesterov, MSE).

Mechanism: a machine-monitoring model (Conv1d -> LeakyReLU blocks, global average pooling,
linear head, MSE) estimates a vibration intensity from the raw signal of an ADC: each channel
sits on a DC offset of 1e3-1e4 counts with oscillations of a few hundred counts on top, and the
target is the intensity in raw counts (tens to a thousand). Nobody standardised the channels or
the target, so the first conv's pre-activations are in the thousands, the initial loss is 1e4-1e6,
and the gradient of the first conv's weights is proportional to the raw input times the raw
error (~1e6-1e8 times what it would be on unit-scale data). With a learning rate that is sane for
standardised data (0.01-0.02 with momentum), the first SGD update changes the weights by orders
of magnitude more than their size: the output and the loss explode, and within 1-2 steps the loss
is inf/NaN. LeakyReLU keeps every unit alive, so the explosion is not hidden by dead units.
Nothing is wrong with the architecture, the init or the lr for unit-scale data.

ORIGIN is None: the fault is in the input pipeline (a missing normalisation), not in a module.
Fixed: the same signals standardised per channel and the target standardised (dataset mean and
std), the usual preprocessing step.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = (
    "PyTorch forum threads on 1-D CNNs for sensor/accelerometer (HAR) and raw audio data whose "
    "loss is NaN or explodes from the first iterations, resolved by normalising the raw signal "
    "(e.g. 'Conv1d loss becomes nan', 'normalise your inputs'); LeCun et al. 1998, Efficient "
    "BackProp, section 4.3 on input normalisation."
)


def _signals(seed: int, steps: int, batch: int, channels: int, length: int, offset: float,
             amp: float) -> list:
    g = torch.Generator().manual_seed(21_000 + seed)
    freqs = 4.0 + 8.0 * torch.rand(channels, generator=g)  # cycles per window
    dc = offset * (0.6 + 0.8 * torch.rand(channels, generator=g))
    mix = torch.rand(channels, generator=g) + 0.5
    t = torch.arange(length, dtype=torch.float32) / length
    out = []
    for _ in range(steps):
        a = amp * (0.2 + 1.6 * torch.rand(batch, channels, 1, generator=g))
        phase = 2 * math.pi * torch.rand(batch, channels, 1, generator=g)
        x = a * torch.sin(2 * math.pi * freqs.view(1, channels, 1) * t + phase)
        x = x + 0.1 * amp * torch.randn(batch, channels, length, generator=g)
        # Target: the vibration intensity, a weighted sum of the per-axis amplitudes (raw counts).
        y = (a.squeeze(2) * mix).sum(dim=1, keepdim=True) / mix.sum()
        out.append((x + dc.view(1, channels, 1), y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([3, 6])
    length = rng.choice([64, 96, 128])
    depth = rng.choice([2, 3, 4])
    width = rng.choice([16, 24, 32])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([120, 160, 200])
    lr = rng.choice([0.01, 0.02])
    nesterov = rng.choice([False, True])
    offset = rng.choice([1e3, 2e3, 8e3])
    amp = rng.choice([200.0, 400.0, 800.0])

    batches = _signals(seed, steps, batch, channels, length, offset, amp)
    if fixed:
        xs = torch.cat([x for x, _ in batches])
        ys = torch.cat([y for _, y in batches])
        mean, std = xs.mean(dim=(0, 2), keepdim=True), xs.std(dim=(0, 2), keepdim=True)
        y_mean, y_std = ys.mean(), ys.std()
        batches = [((x - mean) / std, (y - y_mean) / y_std) for x, y in batches]

    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    c_in = channels
    for _ in range(depth):
        layers += [nn.Conv1d(c_in, width, kernel_size=5, padding=2), nn.LeakyReLU(0.1)]
        c_in = width
    layers += [nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(width, 1)]
    model = nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=nesterov)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
