"""lr_too_high on a tiny Vision Transformer (linear patch embedding, encoder layers, class token).

Mechanism: a ViT-style image classifier (patches flattened and projected by a Linear layer, a
learned class token and position embedding, one or two ``nn.TransformerEncoderLayer`` blocks, a
linear head) trained with SGD + momentum (or Nesterov) at lr 0.5-2, or plain SGD at lr 3-5, with
no warmup: a recipe copied from a small CNN and scaled up "for speed", 25-200x above what this
transformer tolerates (ViTs are trained with AdamW at ~1e-3 and a warmup). The first updates are
as large as the weights themselves (update/weight ratios far above 1e-3); each overshoot makes
the next gradient larger, and within 5-40 steps the loss climbs from ln(C) to 1e2-1e6 and then
overflows to inf/NaN (the step depends on the seed). Nothing is wrong with the data, the init
or any single op.

ORIGIN is None: the failure is global (every parameter receives too large an update), not born
in one module.
Fixed: the same run with a sane learning rate (momentum/Nesterov 0.01-0.02, plain SGD
0.05-0.1), no other change.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "Dosovitskiy et al. 2021 'An Image is Worth 16x16 Words' and Xiong et al. 2020 'On Layer "
    "Normalization in the Transformer Architecture' (transformers diverge without warmup at a "
    "too large lr); PyTorch forum reports of ViTs whose loss goes to NaN with SGD at lr 0.1-1."
)


class TinyViT(nn.Module):
    def __init__(self, size: int, patch: int, dim: int, depth: int, heads: int,
                 classes: int) -> None:
        super().__init__()
        self.patch = patch
        n = (size // patch) ** 2
        self.embed = nn.Linear(patch * patch, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n + 1, dim))
        self.encoder = nn.Sequential(*[
            nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.0,
                                       batch_first=True)
            for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 1, H, W)
        p = self.patch
        b = x.shape[0]
        patches = x.unfold(2, p, p).unfold(3, p, p).reshape(b, -1, p * p)
        tokens = torch.cat([self.cls.expand(b, -1, -1), self.embed(patches)], dim=1) + self.pos
        return self.head(self.norm(self.encoder(tokens)[:, 0]))


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    """Class templates (smoothed noise) at a random shift, plus pixel noise, standardised."""
    g = torch.Generator().manual_seed(320_000 + seed)
    templates = torch.randn(classes, 1, size, size, generator=g)
    templates = nn.functional.avg_pool2d(templates, 3, stride=1, padding=1) * 2.0
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        shift = torch.randint(-1, 2, (2,), generator=g).tolist()
        x = torch.roll(templates[y], shifts=shift, dims=(2, 3))
        batches.append((x + 0.8 * torch.randn(batch, 1, size, size, generator=g), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    size, patch = rng.choice([(12, 4), (16, 4), (12, 3)])
    dim = rng.choice([16, 32])
    heads = rng.choice([2, 4])
    depth = rng.choice([1, 2])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([32, 64])
    steps = rng.choice([100, 120, 150])
    optim = rng.choice(["momentum", "nesterov", "plain"])
    if optim == "plain":
        lr = rng.choice([0.05, 0.1]) if fixed else rng.choice([3.0, 5.0])
    else:
        lr = rng.choice([0.01, 0.02]) if fixed else rng.choice([0.5, 1.0, 2.0])

    batches = _data(seed, steps, batch, size, classes)
    torch.manual_seed(seed)
    model = TinyViT(size, patch, dim, depth, heads, classes)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.0 if optim == "plain" else 0.9,
                          nesterov=optim == "nesterov")
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
