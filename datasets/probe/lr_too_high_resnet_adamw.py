"""lr_too_high on a small pre-activation ResNet with BatchNorm, trained with AdamW or SGD+Nesterov.

Mechanism: a CIFAR-style pre-activation ResNet (He et al. 2016, "Identity Mappings") in the
widely copied kuangliu/pytorch-cifar layout, shrunk to 8x8 or 12x12 three-channel images: a
3x3 stem conv, 2-4 pre-activation basic blocks (BN -> ReLU -> conv -> BN -> ReLU -> conv, plus
the identity), global average pooling of the last block's sum and a linear classifier (no final
BN -> ReLU, as in that code), trained with cross-entropy on a 4-6 class texture task that the
same network learns in a few dozen steps at a sane lr (AdamW 3e-3, or SGD with Nesterov
momentum 0.05). Here the lr is the recipe's "0.1 per 256 examples" linearly scaled to the
global batch the recipe was tuned for (16k-64k), copied into a single-device run of batch 32-64
without warmup: 6.4-25.6, 100-8000x the sane value; even seeds use AdamW (the recipe's weight
decay 5e-4 kept), odd seeds SGD with Nesterov momentum. BatchNorm normalises the input of every
residual branch, but not the stem's output, the branch outputs added to the identity path, or
the classifier: the residual stream's scale is the product of unnormalised weights that each
step moves by far more than their own size. With SGD+Nesterov the first steps multiply the
stream and the logits by 10-1000x per step, momentum feeds the overshoot back, and the loss
overflows to inf/NaN within about five steps. With AdamW every weight moves by about lr (6-26)
per step whatever its gradient: the cross-entropy jumps to 1e2-1e5 within the first steps,
the predicted class flips from step to step and the loss stays 10-1e4x above ln(K) for the
rest of the run (BatchNorm makes it wander rather than overflow). It never comes back to where it
started.

ORIGIN is None: the cause is the optimizer's configuration, shared by every layer, not a module.
Fixed: the same run at the sane learning rate of the same optimizer (AdamW 3e-3, SGD 0.05).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "He et al. 2016, 'Identity Mappings in Deep Residual Networks' (pre-activation ResNet); "
    "Goyal et al. 2017 (linear scaling rule: too large an lr without warmup diverges early); "
    "forum/issue reports 'ResNet loss explodes to NaN with AdamW lr=0.1' and 'SGD lr 10 after "
    "scaling by batch size'; fixed by lowering the lr."
)


class PreActBlock(nn.Module):
    def __init__(self, ch: int) -> None:
        super().__init__()
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv1(torch.relu(self.bn1(x)))
        h = self.conv2(torch.relu(self.bn2(h)))
        return x + h


class PreActResNet(nn.Module):
    def __init__(self, ch: int, blocks: int, classes: int) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1, bias=False)
        self.blocks = nn.Sequential(*[PreActBlock(ch) for _ in range(blocks)])
        self.fc = nn.Linear(ch, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # As in the widely copied kuangliu/pytorch-cifar PreActResNet: the last block's sum is
        # pooled and classified directly, with no final BN -> ReLU.
        h = self.blocks(self.stem(x))
        return self.fc(h.mean(dim=(2, 3)))


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    """Each class is a smooth random colour texture; samples are a random circular shift of
    their class texture plus noise, so the class is in local structure, not position."""
    g = torch.Generator().manual_seed(330_000 + seed)
    tex = torch.randn(classes, 3, size, size, generator=g)
    tex = nn.functional.avg_pool2d(tex, 3, stride=1, padding=1, count_include_pad=False)
    tex = tex / tex.flatten(1).std(dim=1).view(-1, 1, 1, 1)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        shifts = torch.randint(0, size, (batch, 2), generator=g).tolist()
        x = torch.stack(
            [torch.roll(tex[c], tuple(shifts[i]), dims=(1, 2)) for i, c in enumerate(y.tolist())]
        )
        batches.append((x + 0.8 * torch.randn(batch, 3, size, size, generator=g), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    ch = rng.choice([12, 16, 24])
    blocks = rng.choice([2, 3, 4])
    size = rng.choice([8, 12])
    classes = rng.choice([4, 5, 6])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([60, 80, 100])
    optim = ("adamw", "nesterov")[seed % 2]
    # The recipe's lr: 0.1 per 256 examples, linearly scaled to the global batch it was tuned
    # for (16k-64k, 32-128 accelerators), copied into a single-device run without warmup.
    recipe_lr = 0.1 * rng.choice([16384, 32768, 65536]) / 256

    torch.manual_seed(seed)
    model = PreActResNet(ch, blocks, classes)
    if optim == "adamw":
        lr = 3e-3 if fixed else recipe_lr
        opt: torch.optim.Optimizer = torch.optim.AdamW(
            model.parameters(), lr=lr, weight_decay=5e-4
        )
    else:
        lr = 0.05 if fixed else recipe_lr
        opt = torch.optim.SGD(
            model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=5e-4
        )
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, size, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
