"""healthy (hard negative): a small DenseNet on noisily labelled data, with a step-decay lr.

Nothing is wrong with the model or the optimizer. A DenseNet-BC-like CNN (Huang et al. 2017): a
3x3 stem conv, one or two dense blocks of 2-4 layers each (BatchNorm -> ReLU -> 1x1 bottleneck
conv -> BatchNorm -> ReLU -> 3x3 conv with growth rate k, the output concatenated onto the
block's input), a transition (BatchNorm -> ReLU -> 1x1 conv -> 2x2 average pool) between blocks,
then BatchNorm -> ReLU -> global average pool -> linear head. SGD with Nesterov momentum and
weight decay, the lr divided by 10 at ~60% of the run (the DenseNet/ResNet step schedule), on
a 4-5 class "which texture" task (oriented gratings, checkerboards, blobs with random phase and
contrast in noise).

The hard negatives: 25-40% of the labels are replaced by uniformly random classes (annotator
noise, as in web-scraped image sets), so the cross-entropy cannot fall much below the entropy of
the label noise (about 0.7-1.1 nats against log(classes) = 1.4-1.6 at the start) and flattens
early onto a high floor with large batch-to-batch scatter; the lr drop then makes the curve go
flat while still far above zero. About half of the pre-activation-BN ReLU inputs are negative
(the usual BN-ReLU sparsity), and the concatenated dense features of early layers are reused
unchanged by later ones. None of this is a failure: the loss falls clearly, stays finite and
the predicted class on clean held-out images is right ~97-100% of the time.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix; the label noise is a property of
the data, not a bug, and the model is near the noise floor).
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "Huang et al. 2017 (DenseNet / DenseNet-BC: BN-ReLU-conv composite layers, bottlenecks, "
    "transitions, SGD with Nesterov momentum and a step lr schedule); training under symmetric "
    "label noise as in Zhang et al. 2017 ('Understanding deep learning requires rethinking "
    "generalization') and Patrini et al. 2017, where the loss settles on a high floor."
)


class DenseLayer(nn.Module):
    def __init__(self, c_in: int, growth: int) -> None:
        super().__init__()
        self.bn1 = nn.BatchNorm2d(c_in)
        self.relu1 = nn.ReLU()
        self.conv1 = nn.Conv2d(c_in, 4 * growth, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * growth)
        self.relu2 = nn.ReLU()
        self.conv2 = nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        new = self.conv2(self.relu2(self.bn2(self.conv1(self.relu1(self.bn1(x))))))
        return torch.cat([x, new], dim=1)


class Transition(nn.Module):
    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(c_in)
        self.relu = nn.ReLU()
        self.conv = nn.Conv2d(c_in, c_out, 1, bias=False)
        self.pool = nn.AvgPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.conv(self.relu(self.bn(x))))


class DenseNet(nn.Module):
    def __init__(self, growth: int, blocks: int, layers: int, classes: int) -> None:
        super().__init__()
        c = 2 * growth
        self.stem = nn.Conv2d(1, c, 3, padding=1, bias=False)
        stages = []
        for b in range(blocks):
            block = []
            for _ in range(layers):
                block.append(DenseLayer(c, growth))
                c += growth
            stages.append(nn.Sequential(*block))
            if b < blocks - 1:
                stages.append(Transition(c, c // 2))  # compression 0.5
                c //= 2
        self.features = nn.Sequential(*stages)
        self.norm = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(c, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.relu(self.norm(self.features(self.stem(x))))
        return self.head(self.pool(h).flatten(1))


def _textures(g: torch.Generator, n: int, size: int, classes: int) -> tuple:
    """Vertical / horizontal / diagonal gratings, checkerboards and blobs, random phase."""
    y = torch.randint(0, classes, (n,), generator=g)
    coords = torch.arange(size, dtype=torch.float32)
    rr, cc = torch.meshgrid(coords, coords, indexing="ij")
    freq = 1.2 + 0.8 * torch.rand(n, 1, 1, generator=g)
    phase = 2 * math.pi * torch.rand(n, 1, 1, generator=g)
    contrast = 0.5 + 0.5 * torch.rand(n, 1, 1, generator=g)
    k = y.view(n, 1, 1)
    vert = torch.sin(freq * cc + phase)
    horiz = torch.sin(freq * rr + phase)
    diag = torch.sin(freq * (rr + cc) / math.sqrt(2) + phase)
    checker = torch.sin(freq * cc + phase) * torch.sin(freq * rr + phase) * 2.0
    blob_r = size * torch.rand(n, 1, 1, generator=g)
    blob_c = size * torch.rand(n, 1, 1, generator=g)
    blob = 2.0 * torch.exp(-((rr - blob_r) ** 2 + (cc - blob_c) ** 2) / 6.0) - 0.5
    img = torch.where(k == 0, vert, torch.where(k == 1, horiz, torch.where(k == 2, diag, checker)))
    img = torch.where(k == 4, blob, img)
    img = contrast * img + 0.6 * torch.randn(n, size, size, generator=g)
    return img.unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    growth = rng.choice([4, 6, 8])
    blocks = rng.choice([1, 2])
    layers = rng.choice([2, 3, 4])
    classes = rng.choice([4, 5])
    size = rng.choice([10, 12])
    batch = rng.choice([24, 32, 48])
    steps = rng.choice([100, 120, 150])
    lr = rng.choice([0.05, 0.1])
    noise = rng.choice([0.25, 0.3, 0.4])
    drop_at = int(steps * rng.choice([0.5, 0.6, 0.7]))

    g = torch.Generator().manual_seed(360_000 + seed)
    batches = []
    for _ in range(steps):
        x, y = _textures(g, batch, size, classes)
        flip = torch.rand(batch, generator=g) < noise
        y = torch.where(flip, torch.randint(0, classes, (batch,), generator=g), y)
        batches.append((x, y))

    torch.manual_seed(seed)
    model = DenseNet(growth, blocks, layers, classes)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[drop_at], gamma=0.1)
    opt.register_step_post_hook(lambda *_: sched.step())  # the scheduler steps after each step
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
