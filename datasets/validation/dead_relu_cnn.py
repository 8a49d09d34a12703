"""dead_relu in a small ReLU CNN classifier whose conv biases start at a negative constant.

Mechanism: an init loop sets every conv bias to -3 or -4 (a "sparse activations" init, or a bias
constant copied from a gated layer) while the images are standardised and the default conv
weights give pre-activations with a spread of about 0.6. Every pre-activation of the first conv
is then below zero at every position of every image: its ReLU outputs exactly 0, the convs after
it only see their own (negative) biases, no gradient reaches any conv weight, and only the
classifier's bias learns the class prior. The loss sits near log(classes) for the whole run (a
plateau, not a divergence). Seeds change the depth, the width, the kernel, the optimizer and the
bias constant.

ORIGIN: ``features.1``, the first ReLU, whose units are all dead.
Fixed: the same model, data and optimizer with the conv biases left at their default init.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "dead_relu"
ORIGIN = "features.1"
SOURCE = (
    "The dead-ReLU warning of CS231n's activation-function notes ('a large gradient or a bad "
    "bias can make a ReLU unit never activate again') and Lu et al. 2019, 'Dying ReLU and "
    "Initialization'; biases are initialised to 0 (or a small positive constant), never "
    "to a large negative one, for ReLU layers."
)


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    g = torch.Generator().manual_seed(190_000 + seed)
    templates = torch.randn(classes, 1, size, size, generator=g)
    templates = nn.functional.avg_pool2d(templates, 3, stride=1, padding=1) * 2.0
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        shift = torch.randint(-1, 2, (2,), generator=g).tolist()
        x = torch.roll(templates[y], shifts=shift, dims=(2, 3))
        x = x + torch.randn(batch, 1, size, size, generator=g)
        batches.append((x / x.std(), y))  # standardised images
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    convs = rng.choice([2, 3])
    channels = rng.choice([4, 6, 8])
    kernel = rng.choice([3, 5])
    size = rng.choice([10, 12, 14])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([120, 150, 180])
    use_adam = rng.random() < 0.5
    lr = rng.choice([1e-3, 3e-3]) if use_adam else rng.choice([0.02, 0.05])
    bias = rng.choice([-3.0, -4.0])

    torch.manual_seed(seed)
    features = nn.Sequential()
    c_in = 1
    for i in range(convs):
        c_out = channels * (2 if i else 1)
        conv = nn.Conv2d(c_in, c_out, kernel, padding=kernel // 2)
        if not fixed:
            nn.init.constant_(conv.bias, bias)
        features.append(conv)
        features.append(nn.ReLU())
        if i < convs - 1:
            features.append(nn.MaxPool2d(2))
        c_in = c_out
    model = nn.Sequential()
    model.add_module("features", features)
    model.add_module("pool", nn.AdaptiveAvgPool2d(2))
    model.add_module("flatten", nn.Flatten())
    model.add_module("head", nn.Linear(4 * c_in, classes))
    if use_adam:
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, size, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
