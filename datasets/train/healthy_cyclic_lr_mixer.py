"""healthy (hard negative): an MLP-Mixer-style classifier trained with a cyclic (triangular) LR.

Nothing is wrong. A small MLP-Mixer (patches embedded by a Linear layer, token-mixing and
channel-mixing MLPs with GELU and LayerNorm, mean pooling, a linear head) is trained with SGD +
momentum under a triangular cyclic learning rate (Smith 2017's CLR: two to four cycles between
base_lr and a max_lr 8-20x higher). Every time the lr climbs towards its peak, the updates grow
and the loss wobbles upwards for a few steps; as it falls back, the loss drops again. Over the
run the loss falls well below its start. A detector that reads each lr-driven rise of the loss
or of the update/weight ratio as lr_too_high, or a flat stretch near the lr peak as a stall, is
wrong here.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "Smith 2017, 'Cyclical Learning Rates for Training Neural Networks' (torch.optim.lr_scheduler"
    ".CyclicLR, triangular policy) and Tolstikhin et al. 2021, 'MLP-Mixer: An all-MLP "
    "Architecture for Vision'."
)


class MixerBlock(nn.Module):
    def __init__(self, tokens: int, dim: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(),
                                       nn.Linear(2 * tokens, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(),
                                         nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, tokens, dim)
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class Mixer(nn.Module):
    def __init__(self, size: int, patch: int, dim: int, depth: int, classes: int) -> None:
        super().__init__()
        self.patch = patch
        tokens = (size // patch) ** 2
        self.embed = nn.Linear(patch * patch, dim)
        self.blocks = nn.Sequential(*[MixerBlock(tokens, dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.patch
        patches = x.unfold(2, p, p).unfold(3, p, p).reshape(x.shape[0], -1, p * p)
        return self.head(self.norm(self.blocks(self.embed(patches))).mean(1))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    size, patch = rng.choice([(12, 3), (12, 4), (16, 4)])
    dim = rng.choice([16, 24, 32])
    depth = rng.choice([1, 2])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([150, 200, 240])
    cycles = rng.choice([2, 3, 4])
    max_lr = rng.choice([0.05, 0.1])
    base_lr = max_lr / rng.choice([8, 12, 20])

    g = torch.Generator().manual_seed(390_000 + seed)
    templates = torch.randn(classes, 1, size, size, generator=g)
    templates = nn.functional.avg_pool2d(templates, 3, stride=1, padding=1) * 2.0
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        shift = torch.randint(-1, 2, (2,), generator=g).tolist()
        x = torch.roll(templates[y], shifts=shift, dims=(2, 3))
        batches.append((x + 1.0 * torch.randn(batch, 1, size, size, generator=g), y))

    torch.manual_seed(seed)
    model = Mixer(size, patch, dim, depth, classes)
    opt = torch.optim.SGD(model.parameters(), lr=base_lr, momentum=0.9)
    half = max(1, steps // (2 * cycles))
    sched = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=base_lr, max_lr=max_lr,
                                              step_size_up=half, mode="triangular",
                                              cycle_momentum=False)
    opt.register_step_post_hook(lambda *_: sched.step())  # scheduler steps after each step
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
