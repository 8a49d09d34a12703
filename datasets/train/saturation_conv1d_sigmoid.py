"""saturation in a 1-D temporal CNN with tanh or sigmoid activations (vibration-intensity
regression, RMSprop or Adagrad, MSE).

Mechanism: a sensor model estimates the (log) intensity of a vibration signal, a random mix of
harmonics scaled by an intensity of 1-10, with a plain normalisation-free stack Conv1d -> Tanh
(or Sigmoid) repeated 6-8 times, global average pooling and a zero-initialised linear head. The
conv weights are drawn from N(0, std^2) with a fixed std of 2-3 (a "unit-gaussian" init with no
1/sqrt(fan_in) scaling; fan_in = channels x kernel is 10-120) and zero biases, so the
pre-activations have a spread of about 10-100+: far outside the linear range of tanh (about +-1)
or sigmoid (about +-4). From step 0 some 70-90% of the units of the first activation, and of each
one after it, sit at their limits (|tanh| > 0.99, sigmoid < 0.01 or > 0.99), where the
derivative is ~0: the gradient reaching the convs vanishes and they never leave the saturated
regime. A saturated unit with a zero bias outputs the sign of w.x, which does not change when the
input is scaled: the intensity, the very thing to estimate, is erased at the first activation,
and what reaches the head is a near-random binary pattern. The loss stays at about the variance
of the target or wanders above it.

ORIGIN: ``features.1``, the first activation (Tanh or Sigmoid), the first module that saturates.
Fixed: the same init, data and optimizer with a BatchNorm1d between every conv and its
activation, which brings the pre-activations back to unit scale (the usual fix: normalisation).
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "features.1"
SOURCE = (
    "Glorot & Bengio 2010, 'Understanding the difficulty of training deep feedforward neural "
    "networks' (saturated sigmoid/tanh units under a poorly scaled init stall training); "
    "CS231n notes on saturated tanh/sigmoid neurons killing the gradient; Ioffe & Szegedy 2015 "
    "(BatchNorm lets saturating nonlinearities train)."
)


def _data(seed: int, steps: int, batch: int, channels: int, length: int) -> list:
    g = torch.Generator().manual_seed(31_000 + seed)
    # A vibration event of random shape (a few random-phase harmonics under a Gaussian envelope)
    # scaled by an intensity spanning a decade; the target is the log intensity, standardised.
    t = torch.arange(length, dtype=torch.float32) / length
    batches = []
    for _ in range(steps):
        log_a = math.log(10.0) * torch.rand(batch, 1, 1, generator=g)  # intensity 1-10
        wave = torch.zeros(batch, channels, length)
        for k in (2.0, 3.0, 5.0):
            amp = torch.randn(batch, channels, 1, generator=g)
            phase = 2 * math.pi * torch.rand(batch, channels, 1, generator=g)
            wave = wave + amp * torch.sin(2 * math.pi * k * t + phase)
        x = torch.exp(log_a) * wave + 0.02 * torch.randn(batch, channels, length, generator=g)
        y = (log_a.view(batch, 1) - 0.5 * math.log(10.0)) / 0.66
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([6, 7, 8])
    width = rng.choice([12, 16, 24])
    channels = rng.choice([2, 4])
    length = rng.choice([32, 48])
    batch = rng.choice([32, 64])
    steps = rng.choice([150, 200, 250])
    std = rng.choice([2.0, 3.0])
    act = rng.choice([nn.Tanh, nn.Sigmoid])
    optim = rng.choice(["rmsprop", "adagrad"])
    lr = rng.choice([1e-3, 2e-3]) if optim == "rmsprop" else rng.choice([0.02, 0.05])

    torch.manual_seed(seed)
    features = nn.Sequential()
    c_in = channels
    for _ in range(depth):
        conv = nn.Conv1d(c_in, width, kernel_size=5, padding=2)
        nn.init.normal_(conv.weight, 0.0, std)
        nn.init.zeros_(conv.bias)
        features.append(conv)
        if fixed:
            features.append(nn.BatchNorm1d(width))
        features.append(act())
        c_in = width
    model = nn.Sequential()
    model.add_module("features", features)
    model.add_module("pool", nn.AdaptiveAvgPool1d(1))
    model.add_module("flatten", nn.Flatten())
    head = nn.Linear(width, 1)
    nn.init.zeros_(head.weight)  # zero-initialised head: the run starts at log(classes)
    nn.init.zeros_(head.bias)
    model.add_module("head", head)
    if optim == "rmsprop":
        opt: torch.optim.Optimizer = torch.optim.RMSprop(model.parameters(), lr=lr)
    else:
        opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, channels, length),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
