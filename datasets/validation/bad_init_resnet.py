"""bad_init on a small residual CNN regressor without normalisation, SGD with momentum.

Mechanism: a stem conv, then 5-7 residual blocks y = x + conv2(relu(conv1(x))) with no
normalisation layer, global average pooling and a linear head. The block convs are drawn from
N(0, (g * sqrt(2 / fan_in))^2) with g = 1.5-2.5 (kaiming scaling times a gain, as if one layer's
init were applied to a whole residual branch): each branch returns about 2 g^4 times the
variance of its input, and because a block adds its branch to the stream instead of replacing
it, the stream's scale grows by sqrt(1 + 2 g^4), 3-9x, per block, geometrically with depth. At
step 0 the outputs are 1e2-1e7 times too large and the MSE loss is 1e4-1e14; its gradient grows
by the same factors on the way back, so the first SGD update moves the stem and the blocks by
orders of magnitude and the next forward pass overflows to inf/NaN.

ORIGIN: ``blocks.0.conv1``, the first block's first conv, where the geometric growth starts (the
stem before it keeps PyTorch's default init).
Fixed: the same architecture, data and optimizer with the Fixup residual init (Zhang et al.
2019): each block's first conv kaiming-initialised and scaled by blocks^-1/2, its last conv zero
(the "zero-init residual" of Goyal et al. 2017 and torchvision's ``zero_init_residual``), so
every block starts as the identity and the stream's scale does not depend on depth.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "bad_init"
ORIGIN = "blocks.0.conv1"
SOURCE = (
    "Zhang, Dauphin & Ma 2019 (Fixup Initialization: residual networks without normalisation "
    "explode at init because the output variance grows with the number of blocks), Goyal et al. "
    "2017 (zero-initialising the last layer of each residual block) and torchvision ResNet's "
    "zero_init_residual option."
)


class Block(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.act = nn.ReLU()
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(self.act(self.conv1(x)))


class ResNet(nn.Module):
    def __init__(self, channels: int, blocks: int, outputs: int) -> None:
        super().__init__()
        self.stem = nn.Conv2d(1, channels, 3, padding=1)
        self.blocks = nn.Sequential(*[Block(channels) for _ in range(blocks)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(channels, outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.blocks(self.stem(x))
        return self.head(self.pool(h).flatten(1))


def _data(seed: int, steps: int, batch: int, size: int, outputs: int) -> list:
    """Images made of a few smooth random patterns plus noise; targets are their (standardised)
    mixing coefficients, a well-posed regression that a small CNN learns quickly."""
    g = torch.Generator().manual_seed(200_000 + seed)
    patterns = torch.randn(outputs, 1, size, size, generator=g)
    patterns = nn.functional.avg_pool2d(patterns, 3, stride=1, padding=1)
    patterns = patterns / patterns.flatten(1).std(dim=1).view(-1, 1, 1, 1)
    batches = []
    for _ in range(steps):
        y = torch.randn(batch, outputs, generator=g)
        x = torch.einsum("bk,kchw->bchw", y, patterns)
        x = x + 0.5 * torch.randn(batch, 1, size, size, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    blocks = rng.choice([5, 6, 7])
    channels = rng.choice([8, 10])
    size = rng.choice([8, 9])
    outputs = rng.choice([2, 3, 4])
    batch = rng.choice([16, 24])
    steps = rng.choice([90, 110, 130])
    gain = rng.choice([1.5, 2.0, 2.5])
    lr = rng.choice([0.007, 0.01])

    torch.manual_seed(seed)
    model = ResNet(channels, blocks, outputs)
    gen = torch.Generator().manual_seed(210_000 + seed)
    with torch.no_grad():
        for block in model.blocks:
            for conv in (block.conv1, block.conv2):
                std = (2.0 / (conv.in_channels * 9)) ** 0.5
                if not fixed:
                    std *= gain
                elif conv is block.conv1:
                    std *= blocks**-0.5  # Fixup: branch layers scaled by L^(-1/(2m-2)), m = 2
                else:
                    std = 0.0  # zero-init residual: the block starts as the identity
                conv.weight.copy_(torch.randn(conv.weight.shape, generator=gen) * std)
                conv.bias.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, size, outputs),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
