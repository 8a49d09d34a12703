"""bad_init: a normalisation-free Conv2d classifier initialised orthogonally with a gain far above
1 (image classification, plain SGD or Nesterov SGD, cross-entropy with label smoothing).

Mechanism: a plain VGG-style stack of 5-7 3x3 convs with LeakyReLU, no BatchNorm and no
residuals, then global average pooling and a zero-initialised linear head. An init helper applies
``nn.init.orthogonal_(weight, gain=g)`` to every conv with g = 4-6 (a gain meant for another
nonlinearity, or a copy-pasted ``calculate_gain(...) * 4``). Each conv multiplies the scale of its
input by about 3-4 (the orthogonal rows keep the energy of a 3x3 patch, times g), so from step 0
the activation scale grows geometrically with depth, starting at the first conv: from ~1 at the
input to 1e2-2e3 at the last conv. The zero head hides it for one step (the first loss is exactly
log(classes)), but the first SGD step gives the head weights of size lr x (feature scale), the
logits jump to 1e2-1e5, and the gradients reaching the convs are multiplied by the same
geometric factor: the weights grow by orders of magnitude per step and the loss is inf/NaN within
3-6 steps.

ORIGIN: ``features.0``, the first conv, where the geometric growth starts.
Fixed: the same model, data and optimizer with the conv weights initialised by
``kaiming_normal_`` (fan_in, LeakyReLU slope) instead.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = (
    "Saxe et al. 2014 and Hu et al. 2020 on orthogonal init (the gain must match the "
    "nonlinearity); He et al. 2015, 'Delving Deep into Rectifiers' (activations grow or shrink "
    "geometrically with depth under a wrong init scale); PyTorch forum threads on 'loss is huge "
    "from the first iteration' with a custom init."
)


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    g = torch.Generator().manual_seed(51_000 + seed)
    # Class templates: smooth random patterns (low-frequency noise upsampled), shifted and noisy.
    low = torch.randn(classes, 1, 4, 4, generator=g)
    templates = nn.functional.interpolate(low, size=(size, size), mode="bilinear",
                                          align_corners=False)
    templates = templates / templates.std(dim=(2, 3), keepdim=True)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        dx, dy = (int(v) for v in torch.randint(-1, 2, (2,), generator=g))
        x = torch.roll(templates[y], shifts=(dx, dy), dims=(2, 3))
        x = x + 0.7 * torch.randn(batch, 1, size, size, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([5, 6, 7])
    width = rng.choice([12, 16, 24])
    size = rng.choice([12, 16])
    classes = rng.choice([4, 6, 8])
    batch = rng.choice([32, 64])
    steps = rng.choice([150, 200, 250])
    gain = rng.choice([4.0, 5.0, 6.0])
    nesterov = rng.choice([False, True])
    lr = rng.choice([0.01, 0.02]) if nesterov else rng.choice([0.05, 0.1])

    torch.manual_seed(seed)
    features = nn.Sequential()
    c_in = 1
    for i in range(depth):
        stride = 2 if i in (2, 4) else 1
        conv = nn.Conv2d(c_in, width, kernel_size=3, stride=stride, padding=1)
        if fixed:
            nn.init.kaiming_normal_(conv.weight, a=0.1, nonlinearity="leaky_relu")
        else:
            nn.init.orthogonal_(conv.weight, gain=gain)
        nn.init.zeros_(conv.bias)
        features.append(conv)
        features.append(nn.LeakyReLU(0.1))
        c_in = width
    model = nn.Sequential()
    model.add_module("features", features)
    model.add_module("pool", nn.AdaptiveAvgPool2d(1))
    model.add_module("flatten", nn.Flatten())
    head = nn.Linear(width, classes)
    nn.init.zeros_(head.weight)  # zero-initialised head: every run starts at log(classes)
    nn.init.zeros_(head.bias)
    model.add_module("head", head)
    if nesterov:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(label_smoothing=0.1),
        "batches": _data(seed, steps, batch, size, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
