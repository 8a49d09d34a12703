"""dead_relu in a small MobileNetV2 (inverted residuals, BN, ReLU6): zero-init-last misapplied.

Mechanism: a texture classifier (oriented gratings in noise) built from a stem conv -> BN ->
ReLU6 and 2-6 MobileNetV2 inverted-residual blocks (1x1 expand -> BN -> ReLU6 -> 3x3 depthwise
-> BN -> ReLU6 -> 1x1 project -> BN, plus the input when the shape is unchanged), global average
pooling and a linear head; SGD with momentum and weight decay, as in the MobileNetV2 recipe. The
init code means to apply the "zero-init-last" trick (Goyal et al. 2017; timm's
``zero_init_last``, torchvision's ``zero_init_residual``): set the gamma of the *last* BN of
each residual branch to 0 so the block starts as the identity. The loop is written as
``for m in model.modules(): if isinstance(m, nn.BatchNorm2d): zeros_(m.weight)`` and so also
zeroes the gamma of every BN that feeds a ReLU6. Such a BN outputs its beta, which is 0, at
every position of every image; ReLU6(0) = 0 and its derivative there is 0 (the unit sits on the
kink, on the flat side), so no gradient reaches that BN's gamma or beta, nor anything below it:
the stem's ReLU6 is dead from step 0 and stays dead, and so is every ReLU6 after it. The blocks
then receive zeros, the pooled features are zeros, and only the head's bias learns the class
prior: the loss sits at about log(classes) for the whole run, a plateau with finite values, no
divergence. Nothing in the weights is large or non-finite; the units are simply all off.

ORIGIN: ``stem.2``, the stem's ReLU6, the first activation whose units are all dead (its BN's
gamma is the zeroed weight at fault; every later ReLU6 is dead because of it and its own BN).
Fixed: the same model, data and optimizer with zero-init-last applied as intended, to the
projection BN (``conv.7``) of the residual blocks only.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "dead_relu"
ORIGIN = "stem.2"
SOURCE = (
    "Sandler et al. 2018 (MobileNetV2: inverted residuals, linear bottlenecks, ReLU6); the "
    "zero-init-last / zero_init_residual trick of Goyal et al. 2017 (timm, torchvision), which "
    "zeroes only the last BN of a residual branch; forum reports of a loss stuck at "
    "log(num_classes) after zeroing every BatchNorm weight, i.e. dead ReLUs from step 0."
)


class InvertedResidual(nn.Module):
    """MobileNetV2 block: 1x1 expand -> BN -> ReLU6 -> 3x3 depthwise -> BN -> ReLU6 -> 1x1
    project -> BN (linear bottleneck), plus the input when the shape is unchanged."""

    def __init__(self, c_in: int, c_out: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = c_in * expand
        self.use_res = stride == 1 and c_in == c_out
        self.conv = nn.Sequential(
            nn.Conv2d(c_in, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, stride=stride, padding=1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(),
            nn.Conv2d(hidden, c_out, 1, bias=False),
            nn.BatchNorm2d(c_out),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv(x)
        return x + out if self.use_res else out


class MobileNetV2(nn.Module):
    def __init__(self, width: int, stages: int, repeats: int, expand: int, classes: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU6()
        )
        layers = []
        c = width
        for i in range(stages):
            c_out = width * 2**i
            for r in range(repeats):
                stride = 2 if (r == 0 and i > 0) else 1
                layers.append(InvertedResidual(c, c_out, stride, expand))
                c = c_out
        self.blocks = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(c, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")  # as torchvision's MobileNetV2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.blocks(self.stem(x))).flatten(1))


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    """Texture classes: a grating whose orientation is the class (random phase and frequency
    jitter), plus pixel noise; standardised. A global-pool CNN learns it easily."""
    g = torch.Generator().manual_seed(430_000 + seed)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    angles = torch.arange(classes) * torch.pi / classes
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        theta = angles[y] + 0.1 * torch.randn(batch, generator=g)
        freq = 0.9 + 0.3 * torch.rand(batch, generator=g)
        phase = 2 * torch.pi * torch.rand(batch, generator=g)
        proj = xx * torch.cos(theta).view(-1, 1, 1) + yy * torch.sin(theta).view(-1, 1, 1)
        x = torch.sin(freq.view(-1, 1, 1) * proj + phase.view(-1, 1, 1)).unsqueeze(1)
        x = x + 0.8 * torch.randn(batch, 1, size, size, generator=g)
        batches.append(((x - x.mean()) / x.std(), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    stages = rng.choice([2, 3])
    repeats = rng.choice([1, 2])
    width = rng.choice([8, 12])
    expand = rng.choice([2, 3])
    size = rng.choice([12, 16])
    classes = rng.choice([4, 5, 6])
    batch = rng.choice([32, 48])
    steps = rng.choice([100, 120, 150])
    lr = rng.choice([0.02, 0.05])

    torch.manual_seed(seed)
    model = MobileNetV2(width, stages, repeats, expand, classes)
    with torch.no_grad():
        if fixed:
            # zero-init-last as intended: only the projection BN of each residual block, so
            # every residual block starts as the identity
            for block in model.blocks:
                if block.use_res:
                    nn.init.zeros_(block.conv[7].weight)
        else:
            # bug: the zero-init-last loop matches every BatchNorm2d, including the ones
            # that feed a ReLU6
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    nn.init.zeros_(m.weight)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=4e-5)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, size, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
