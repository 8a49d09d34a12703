"""dead_relu in a small BatchNorm ResNet whose BatchNorm scales were all initialised to zero.

Mechanism: a ResNet-style classifier (stem conv -> BatchNorm -> ReLU, then 1-3 basic blocks
relu(x + bn2(conv2(relu(bn1(conv1(x)))))), global average pooling, linear head), trained with
SGD + momentum and weight decay. The "zero-init residual" trick (Goyal et al. 2017; torchvision's
``zero_init_residual``) sets the scale (gamma) of the LAST BatchNorm of each residual branch to
zero, so that every block starts as the identity. Here the init loop sets gamma = 0 on EVERY
BatchNorm, the stem's included (``for m in model.modules(): if isinstance(m, nn.BatchNorm2d):
nn.init.zeros_(m.weight)``). The stem BatchNorm then outputs gamma * x_hat + beta = 0 + 0 = 0
at every position of every image, so the stem ReLU outputs exactly 0 and its gradient at 0 is
0: no gradient reaches the stem's BatchNorm (its gamma and beta), its conv, or anything before.
Everything after it sees an all-zero map, whose batch-normalised value is 0 again; every
block's ReLU outputs 0 too, the pooled features are 0, and only the head's bias learns the
class prior. The cross-entropy stays at about log(classes) for the whole run: a plateau.

ORIGIN: ``stem.2``, the stem's ReLU, the first ReLU whose units are all dead.
Fixed: the same architecture, data and optimizer with the zero-init applied as intended: gamma
= 1 on every BatchNorm except the last one of each residual branch (``bn2``).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "dead_relu"
ORIGIN = "stem.2"
SOURCE = (
    "Goyal et al. 2017, 'Accurate, Large Minibatch SGD' (zero-initialise gamma of the last BN in "
    "each residual block only) and torchvision's resnet(zero_init_residual=True); the same init "
    "applied to every BatchNorm feeds each ReLU an identically zero input, and PyTorch's "
    "ReLU'(0) = 0: the dying-ReLU situation of CS231n's notes (units that never activate again)."
)


class BasicBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu2 = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu2(x + self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x))))))


class ResNet(nn.Module):
    def __init__(self, c: int, blocks: int, classes: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()
        )
        self.blocks = nn.Sequential(*[BasicBlock(c) for _ in range(blocks)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(c, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.blocks(self.stem(x))).flatten(1))


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    """Standardised images: a class-specific smooth texture at a random shift, plus noise."""
    g = torch.Generator().manual_seed(230_000 + seed)
    textures = torch.randn(classes, 1, size, size, generator=g)
    textures = nn.functional.avg_pool2d(textures, 3, stride=1, padding=1)
    textures = textures / textures.flatten(1).std(dim=1).view(-1, 1, 1, 1)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        shift = torch.randint(-2, 3, (2,), generator=g).tolist()
        x = torch.roll(textures[y], shifts=shift, dims=(2, 3))
        batches.append((x + 0.8 * torch.randn(batch, 1, size, size, generator=g), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    c = rng.choice([8, 12])
    blocks = rng.choice([1, 2, 3])
    size = rng.choice([10, 12])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([150, 200])
    lr = rng.choice([0.05, 0.1])

    torch.manual_seed(seed)
    model = ResNet(c, blocks, classes)
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d):
            last_of_branch = name.endswith(".bn2")
            nn.init.constant_(m.weight, 0.0 if (last_of_branch or not fixed) else 1.0)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, size, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
