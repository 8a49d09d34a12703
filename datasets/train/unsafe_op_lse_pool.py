"""unsafe_op: log-sum-exp (LSE) pooling written as log(mean(exp(r * s))) in a weakly supervised CNN.

Mechanism: a multi-label detector trained from image-level labels only (which pattern types
occur somewhere in the image), as in weakly supervised localisation: a small ReLU CNN outputs
one score map per class and an LSE pooling module turns each map into an image-level logit,
``(1/r) * log(mean(exp(r * s)))`` with a sharpness r of 12-24 (between average pooling, r -> 0,
and max pooling, r -> inf), trained with ``BCEWithLogitsLoss``. The pooling is written exactly as
that formula, without subtracting the max first. At first the scores are small and all is calm.
Training makes the detector confident: the score at a present pattern rises and the scores of
absent classes sink. Once some score passes 88.7 / r (about 3.7-7.4), ``exp(r * s)`` overflows
float32 to inf and the logit is inf; or once every score of a map is below about -103 / r,
every exp underflows to 0 and the logit is ``log(0) = -inf``. Either value is born in the
pooling's forward pass on finite score maps, and the loss (``BCEWithLogits`` of +-inf) and the
gradients are NaN. The step depends on r, the data, the lr and the network (seeded).

ORIGIN: ``pool``, the LSE pooling module whose ``exp``/``log`` produce the first non-finite value
(the score maps it receives are finite, about 4-15 at their largest).
Fixed: the same pooling computed stably, ``(torch.logsumexp(r * s) - log(n)) / r``, which is the
same function without the overflow.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "pool"
SOURCE = (
    "Pinheiro & Collobert 2015 (LSE pooling for weakly supervised segmentation) and Wang et al. "
    "2017 (ChestX-ray8: LSE pooling of class heatmaps); naive log(sum(exp(x))) overflows float32 "
    "once r * x > 88.7, the textbook reason for the max-subtracted logsumexp (torch.logsumexp)."
)


class LSEPool(nn.Module):
    """Log-sum-exp pooling of (B, K, H, W) score maps to (B, K) logits, sharpness r."""

    def __init__(self, r: float, stable: bool) -> None:
        super().__init__()
        self.r, self.stable = r, stable

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        flat = self.r * s.flatten(2)
        if self.stable:
            return (torch.logsumexp(flat, dim=2) - math.log(flat.shape[2])) / self.r
        return torch.log(torch.exp(flat).mean(dim=2)) / self.r


class WeakDetector(nn.Module):
    def __init__(self, channels: int, classes: int, r: float, stable: bool) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, classes, 1),
        )
        self.pool = LSEPool(r, stable)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.features(x))


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    """Noisy images holding 0-`classes` small patterns (one 3x3 template per class) at random
    positions; the label says which classes are present."""
    g = torch.Generator().manual_seed(210_000 + seed)
    templates = torch.randn(classes, 3, 3, generator=g)
    templates = 6.0 * templates / templates.flatten(1).norm(dim=1).view(-1, 1, 1)
    batches = []
    for _ in range(steps):
        y = (torch.rand(batch, classes, generator=g) < 0.4).float()
        x = 0.3 * torch.randn(batch, 1, size, size, generator=g)
        rows = torch.randint(0, size - 2, (batch, classes), generator=g)
        cols = torch.randint(0, size - 2, (batch, classes), generator=g)
        for b in range(batch):
            for k in range(classes):
                if y[b, k]:
                    r, c = int(rows[b, k]), int(cols[b, k])
                    x[b, 0, r : r + 3, c : c + 3] += templates[k]
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([8, 12, 16])
    classes = rng.choice([2, 3, 4])
    size = rng.choice([12, 14, 16])
    batch = rng.choice([16, 32])
    steps = rng.choice([150, 200, 250])
    r = rng.choice([12.0, 16.0, 24.0])
    optim = rng.choice(["adam", "sgd"])
    lr = rng.choice([2e-3, 4e-3]) if optim == "adam" else rng.choice([0.02, 0.05])

    torch.manual_seed(seed)
    model = WeakDetector(channels, classes, r, stable=fixed)
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.BCEWithLogitsLoss(),
        "batches": _data(seed, steps, batch, size, classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
