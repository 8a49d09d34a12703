"""dead_relu: a SqueezeNet-style CNN whose 3-channel fire-module squeeze dies a few steps after an
SGDR-style warm restart to 20x the learning rate (Adam, cross-entropy, raw [0, 1] pixels).

Mechanism: a small fully-convolutional classifier (stem conv3x3 -> ReLU -> max-pool, one fire
module: squeeze conv1x1 to 3 channels -> ReLU -> expand conv3x3 -> ReLU, global average pooling,
linear head) is trained on synthetic coloured gratings (4-5 classes, 5% of labels flipped) fed as
raw [0, 1] pixels. The squeeze bias starts at +0.2 so the narrow squeeze fires at init. Adam warms
up over 15 steps to 5e-3 and the loss falls from ln(C) to ~0.3-0.8 over the first 60-80 steps. Then
the schedule restarts (SGDR-style) with a max_lr of 0.1, 20x the first cycle's, and decays with a
cosine. Adam moves every weight by about the learning rate per step; the squeeze's inputs are ReLU
outputs (all >= 0), so all weights of a squeeze filter move in the same direction as its bias and
its pre-activation shifts at once at every position of every image. Within 3-8 steps of the restart
(at steps 88, 86 and 66 in seeds 0-2) each of the 3 squeeze channels is negative everywhere: the
expand layer receives an all-zero map, the logits are the same for every image, and the
cross-entropy sits at ln(C) (1.39 or 1.61) to the end of the run. The restart throws the loss up
for 2-4 steps (the whole network takes a 20x step before the squeeze dies; the fixed run shows the
same transient), then it settles on the ln(C) plateau, with no NaN and no divergence; the cosine
decay cannot revive filters whose gradient is exactly zero. Part of the stem dies too (10-20%
before the restart, 65-85% after), and the expand layer follows the squeeze a few steps later, but
the squeeze is the layer that dies completely, first. (Stochastic: over seeds 0-11, 8 runs are
valid; in the others one squeeze channel survives or the fixed run does not recover in time.)

ORIGIN: ``squeeze.1``, the fire module's squeeze ReLU.
Fixed: the same data, init, optimizer and schedule with LeakyReLU(0.1) in place of every ReLU: the
squeeze channels pushed below zero keep a gradient (rescaled by Adam), come back, and the cosine
phase brings the loss back down (~0.2-0.3 at the end in seeds 0-2).
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "dead_relu"
ORIGIN = "squeeze.1"
SOURCE = (
    "forresti/SqueezeNet issue #18 ('v1.1 loss does not decrease ... always about 6.9', i.e. "
    "ln(1000)) and PR #35 (ReLUs replaced by PReLUs); Iandola et al. 2016 for the fire module; "
    "Loshchilov & Hutter 2017 (SGDR warm restarts); CS231n's note that a too-high learning rate "
    "can push ReLU units into a never-active state."
)


class FireNet(nn.Module):
    def __init__(self, classes: int, stem: int, squeeze: int, expand: int, act) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, stem, 3, padding=1), act(), nn.MaxPool2d(2))
        self.squeeze = nn.Sequential(nn.Conv2d(stem, squeeze, 1), act())
        self.expand = nn.Sequential(
            nn.Conv2d(squeeze, expand, 3, padding=1), act(), nn.AdaptiveAvgPool2d(1), nn.Flatten()
        )
        self.head = nn.Linear(expand, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.expand(self.squeeze(self.stem(x))))


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    """Coloured sinusoidal gratings, one orientation/frequency/colour per class, random phase,
    pixel noise, clipped to [0, 1]; 5% of the labels are replaced by random ones."""
    g = torch.Generator().manual_seed(41_000 + seed)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    angle = torch.arange(classes).float() * math.pi / classes + torch.rand(1, generator=g)
    freq = 0.7 + torch.rand(classes, generator=g) * 0.6
    colour = 0.3 + 0.7 * torch.rand(classes, 3, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        phase = torch.rand(batch, 1, 1, generator=g) * 2 * math.pi
        a = angle[y].view(-1, 1, 1)
        f = freq[y].view(-1, 1, 1)
        img = 0.5 + 0.5 * torch.sin(f * (xx * torch.cos(a) + yy * torch.sin(a)) + phase)
        img = img.unsqueeze(1) * colour[y].view(-1, 3, 1, 1)
        img = (img + 0.1 * torch.randn(batch, 3, size, size, generator=g)).clamp(0, 1)
        flip = torch.rand(batch, generator=g) < 0.05
        y = torch.where(flip, torch.randint(0, classes, (batch,), generator=g), y)
        batches.append((img, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    classes = rng.choice([4, 5])
    stem = rng.choice([12, 16])
    expand = rng.choice([16, 24])
    size = rng.choice([12, 14])
    batch = rng.choice([32, 48])
    steps = rng.choice([160, 200])
    lr = rng.choice([0.005])
    restart = rng.choice([60, 80])
    warmup = 15
    restart_factor = 20.0  # max_lr of the second cycle: 0.1

    torch.manual_seed(seed)
    act = (lambda: nn.LeakyReLU(0.1)) if fixed else nn.ReLU
    model = FireNet(classes, stem, 3, expand, act)
    nn.init.constant_(model.squeeze[0].bias, 0.2)  # keep the 3-channel squeeze alive at init
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def factor(i: int) -> float:
        if i < restart:
            return min(1.0, (i + 1) / warmup)
        t = (i - restart) / (steps - restart)
        return restart_factor * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * t)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    opt.register_step_post_hook(lambda *_: sched.step())
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, size, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
