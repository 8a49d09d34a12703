"""saturation in a tanh CNN regressor (exposure estimation, SGD with momentum or Adam).

Mechanism: a plain conv stack, Conv2d -> Tanh repeated 3-5 times (LeNet-style, a 5x5 first layer
then 3x3), whose kernels are drawn with a fixed std of 3-5 (``normal_(w, 0, std)``, no
1/sqrt(fan_in) scaling). The first conv sums 25 taps and already produces pre-activations with a
spread of about 20-35; every later conv sums 9 x channels near-+-1 inputs, so its pre-activations
spread over 25-50, far outside tanh's linear range (about +-1). From step 0 about 90% of the units
sit at +-1, tanh'(a) ~ 0 and the gradient reaching the kernels vanishes. A saturated unit only
passes the sign of its pre-activation, and with zero biases the sign does not change when the image
is scaled: the target here is the image's exposure (a gain on pattern and noise alike), so the
saturated maps that reach the pooled head carry almost none of it. The MSE loss stays at about
var(y) (or wanders above it as the head fits noise): a plateau, not a divergence.

The activations stay bounded (|h| <= 1) and flat with depth: unlike bad_init on a ReLU stack,
nothing grows, the units are pinned at the tanh limits.

ORIGIN: ``net.1``, the Tanh after the first conv, the first activation that saturates.
Fixed: the same kernels, data and optimizer with a BatchNorm2d between every conv and its Tanh
(pre-activations back to unit scale per channel, relative to the batch), which removes the
saturation: the units keep the magnitude and the loss falls.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = (
    "LeCun et al. 1998 (Efficient BackProp, sec. 4.6: weights must keep tanh units in their "
    "linear range) and Glorot & Bengio 2010 on saturated tanh units stalling deep nets; Ioffe & "
    "Szegedy 2015 (Batch Normalization) on normalising before the nonlinearity to avoid it."
)


def _data(seed: int, steps: int, batch: int, size: int, kinds: int) -> list:
    """Exposure regression: each image is one of ``kinds`` smooth random patterns plus sensor
    noise, all multiplied by an exposure gain exp(0.5 * y); the target is y ~ N(0, 1)."""
    g = torch.Generator().manual_seed(150_000 + seed)
    patterns = torch.randn(kinds, 1, size, size, generator=g)
    patterns = nn.functional.avg_pool2d(patterns, 3, stride=1, padding=1)
    patterns = patterns / patterns.flatten(1).std(dim=1).view(-1, 1, 1, 1)
    batches = []
    for _ in range(steps):
        k = torch.randint(0, kinds, (batch,), generator=g)
        y = torch.randn(batch, 1, generator=g)
        x = patterns[k] + 0.5 * torch.randn(batch, 1, size, size, generator=g)
        batches.append((x * torch.exp(0.5 * y).view(-1, 1, 1, 1), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([3, 4, 5])
    channels = rng.choice([8, 10])
    size = rng.choice([8, 10])
    kinds = rng.choice([3, 4, 5])
    batch = rng.choice([32, 40, 48])
    steps = rng.choice([90, 110, 130])
    std = rng.choice([3.0, 4.0, 5.0])
    optim = rng.choice(["adam", "sgd"])
    lr = rng.choice([2e-3, 5e-3]) if optim == "adam" else rng.choice([0.02, 0.05])

    torch.manual_seed(seed)
    net = nn.Sequential()
    c_in = 1
    for i in range(depth):
        k = 5 if i == 0 else 3  # LeNet-style 5x5 first layer
        conv = nn.Conv2d(c_in, channels, k, padding=k // 2)
        nn.init.normal_(conv.weight, 0.0, std)
        nn.init.zeros_(conv.bias)
        net.append(conv)
        if fixed:
            net.append(nn.BatchNorm2d(channels))
        net.append(nn.Tanh())
        c_in = channels
    net.append(nn.AdaptiveAvgPool2d(2))
    net.append(nn.Flatten())
    head = nn.Linear(4 * channels, 1)
    nn.init.zeros_(head.weight)  # zero-initialised regression head: the run starts at var(y)
    nn.init.zeros_(head.bias)
    net.append(head)
    model = nn.Sequential()
    model.add_module("net", net)
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, size, kinds),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
