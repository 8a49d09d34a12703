"""bad_init: a norm-free stack of residual transformer feed-forward blocks initialised with a far
too large std (sequence classification, SGD with momentum, cross-entropy).

Mechanism: tokens are projected to d_model (32-64), pass through 4-6 residual blocks x = x +
fc2(gelu(fc1(x))) (the position-wise FFN of a transformer, 4x expansion, no LayerNorm: a
"norm-free" variant), are mean-pooled and classified. Every block Linear is drawn from N(0, std^2)
with a fixed std of 0.2-0.5, an ``initializer_range`` that ignores the fan-in (the usual value is
0.02). fc1 multiplies the scale by std * sqrt(d) (1.5-3), GELU acts like a ReLU on such inputs, and
fc2 sums 4d of them with the same std, so each branch returns about 2 d^2 std^4 times the variance
of its input (20-150x): because the block adds its branch to the stream, the stream's scale grows
by sqrt(1 + 2 d^2 std^4), 4-12x per block, geometrically with depth (4-6 blocks) from step 0. The
logits start 1e2-1e6 times too large and the cross-entropy loss is huge; its gradient grows by the
same factors on the way back, so the first SGD updates move the blocks by orders of magnitude and
the loss goes to inf/NaN within a few steps.

ORIGIN: ``blocks.0.fc1``, the first block's first Linear, where the geometric growth starts (the
input projection before it keeps PyTorch's default init).
Fixed: the same architecture, data and optimizer with a fan-in-scaled init: fc1 ~ N(0, 1/d),
fc2 ~ N(0, 1/(4d)) times 1/sqrt(2 * blocks) (GPT-2's scaled residual init), biases zero.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "bad_init"
ORIGIN = "blocks.0.fc1"
SOURCE = (
    "Radford et al. 2019 (GPT-2: residual projections scaled by 1/sqrt(N), weights N(0, 0.02)) "
    "and Zhang et al. 2019 / Huang et al. 2020 (Fixup, T-Fixup: without normalisation the "
    "residual stream grows with depth unless the init is scaled); the pattern of a transformer "
    "config's initializer_range set far above its usual 0.02."
)


class FFNBlock(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(self.act(self.fc1(x)))


class FFNStack(nn.Module):
    def __init__(self, d_in: int, d: int, blocks: int, classes: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d_in, d)
        self.blocks = nn.Sequential(*[FFNBlock(d) for _ in range(blocks)])
        self.head = nn.Linear(d, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.proj(x)).mean(dim=1))


def _data(seed: int, steps: int, batch: int, seq: int, d_in: int, classes: int) -> list:
    """Each sequence is noise plus a few tokens drawn near the prototype of its class, and the
    tokens of a class carry a nonlinear signature (a product of two coordinates)."""
    g = torch.Generator().manual_seed(140_000 + seed)
    protos = torch.randn(classes, d_in, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        x = torch.randn(batch, seq, d_in, generator=g)
        mask = (torch.rand(batch, seq, 1, generator=g) < 0.4).float()
        x = x + 1.2 * mask * protos[y].unsqueeze(1)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([8, 12, 16])
    d = rng.choice([32, 48, 64])
    blocks = rng.choice([4, 5, 6])
    seq = rng.choice([6, 8, 12])
    classes = rng.choice([3, 4, 6])
    batch = rng.choice([32, 64])
    steps = rng.choice([120, 150, 200])
    lr = rng.choice([0.01, 0.02, 0.03])
    # The bad std: a round value that gives each branch a variance gain 2 d^2 std^4 of 20-150.
    gain = rng.choice([20.0, 50.0, 150.0])
    std = round((gain / (2 * d * d)) ** 0.25, 2)

    torch.manual_seed(seed)
    model = FFNStack(d_in, d, blocks, classes)
    gen = torch.Generator().manual_seed(150_000 + seed)
    for block in model.blocks:
        for lin in (block.fc1, block.fc2):
            if fixed:
                s = lin.in_features**-0.5
                if lin is block.fc2:
                    s = s / (2 * blocks) ** 0.5
            else:
                s = std
            with torch.no_grad():
                lin.weight.copy_(torch.randn(lin.weight.shape, generator=gen) * s)
                lin.bias.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, seq, d_in, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
