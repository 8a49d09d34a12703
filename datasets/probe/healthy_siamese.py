"""healthy (hard negative): a Siamese CNN with a contrastive loss and a hard-negative phase.

Nothing is wrong. A face/signature-verification style Siamese net: one small CNN encoder
(two convs, pooling, a linear projection to a 24-32-d embedding) is applied to both images of a
pair, and the contrastive loss of Hadsell et al. (squared distance for genuine pairs, squared
hinge ``relu(margin - d)^2`` for impostor pairs, margin 1.5-2) is trained with Adam. The
identities come in look-alike pairs (prototype and a perturbed copy). For the first 50-90 steps
impostors are drawn from unrelated identities and the loss falls fast, from about 0.7-1.7 to
0.1-0.3; then a hard-negative phase starts (as in FaceNet-style mining: 40% of the impostors
are now the look-alike identity), and the loss jumps by 1.2-2.5x within a few steps and the
batch loss becomes noisier (a few hard pairs inside the margin dominate each batch). The
net then learns the finer differences and the loss falls again, ending below its first-steps
level by a factor of 2-6. The distance is ``F.pairwise_distance`` (its eps keeps the backward
finite at d = 0). A detector that flags the jump, the noisier loss and gradients or the
slower second phase is wrong here.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn
from torch.nn import functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "Hadsell, Chopra & LeCun 2006 (contrastive loss for Siamese networks) and Chopra et al. "
    "2005 (Siamese verification nets); hard-negative mining as in Schroff et al. 2015 (FaceNet) "
    "and Wu et al. 2017 (Sampling Matters in Deep Embedding Learning), where switching to hard "
    "negatives raises the loss before it falls again."
)


class Encoder(nn.Module):
    def __init__(self, channels: int, dim: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),
        )
        self.proj = nn.Linear(8 * channels, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.features(x))


class Siamese(nn.Module):
    """One encoder applied to both images of a pair; returns (B, 2, dim) embeddings."""

    def __init__(self, channels: int, dim: int) -> None:
        super().__init__()
        self.encoder = Encoder(channels, dim)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.stack([self.encoder(a), self.encoder(b)], dim=1)


def contrastive_loss(margin: float):
    def loss_fn(emb: torch.Tensor, same: torch.Tensor) -> torch.Tensor:
        d = F.pairwise_distance(emb[:, 0], emb[:, 1])  # eps inside: safe at d = 0
        return (same * d.pow(2) + (1 - same) * F.relu(margin - d).pow(2)).mean()

    return loss_fn


def _data(seed: int, steps: int, batch: int, size: int, ids: int, hard_from: int) -> list:
    """Identities come in look-alike pairs (2k, 2k+1): the second prototype is the first plus a
    small change. Each image is its identity's prototype, shifted by up to a pixel, plus noise.
    Half of each batch are positive pairs. Negatives are drawn from different look-alike pairs
    until ``hard_from``; from then on half the negatives are the look-alike (hard negatives)."""
    g = torch.Generator().manual_seed(470_000 + seed)
    base = torch.randn(ids // 2, 1, size, size, generator=g)
    twin = base + 1.2 * torch.randn(base.shape, generator=g)
    protos = torch.stack([base, twin], dim=1).flatten(0, 1)
    protos = F.avg_pool2d(protos, 3, stride=1, padding=1)
    protos = protos / protos.flatten(1).std(dim=1).view(-1, 1, 1, 1)

    def sample(idx: torch.Tensor) -> torch.Tensor:
        x = protos[idx]
        shift = torch.randint(-1, 2, (2,), generator=g).tolist()
        x = torch.roll(x, shifts=shift, dims=(2, 3))
        return x + 0.3 * torch.randn(x.shape, generator=g)

    batches = []
    half = batch // 2
    for step in range(steps):
        a = torch.randint(0, ids, (batch,), generator=g)
        other = (a + 2 * torch.randint(1, ids // 2, (batch,), generator=g)) % ids
        if step >= hard_from:
            hard = torch.rand(batch, generator=g) < 0.4
            other = torch.where(hard, a ^ 1, other)  # the look-alike identity
        b = torch.cat([a[:half], other[half:]])
        same = torch.cat([torch.ones(half), torch.zeros(batch - half)])
        batches.append(((sample(a), sample(b)), same))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([8, 12])
    dim = rng.choice([24, 32])
    size = rng.choice([12, 16])
    ids = rng.choice([20, 30, 40])
    batch = rng.choice([32, 48])
    steps = rng.choice([150, 180, 200])
    hard_from = rng.choice([50, 70, 90])
    lr = rng.choice([2e-3, 3e-3])
    margin = rng.choice([1.5, 2.0])

    torch.manual_seed(seed)
    model = Siamese(channels, dim)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": contrastive_loss(margin),
        "batches": _data(seed, steps, batch, size, ids, hard_from),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
