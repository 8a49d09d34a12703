"""fp16_overflow: bilinear pooling (B-CNN) of large "pretrained" conv features under float16.

Mechanism: a texture classifier in the style of Bilinear CNNs (Lin et al. 2015): a small ReLU conv
backbone, then a bilinear pooling module that takes the outer product of the feature vectors at
every position summed over positions, ``G = X @ X^T`` (X: channels x positions), divides it by the
number of positions, and applies the signed square root and L2 normalisation before a linear head.
The backbone comes from a checkpoint trained in fp32 whose last conv produces large activations
(VGG's conv5 features, which B-CNNs pool, reach the hundreds). The model is fine-tuned with Adam
under ``torch.autocast(float16)`` (with or without a GradScaler, by seed), the usual fine-tuning
recipe: the new head at lr 1e-2-2e-2, the pretrained backbone at 5e-5-1e-4, so the features keep
their scale. Autocast runs the ``bmm`` of ``X @ X^T`` in float16: the sum over positions is
rounded to a float16 result before the division. The images' contrast is log-normal (sigma
0.5), so most batches keep the largest entry of G below the float16 maximum (65504), but the first
batch carrying a high-contrast image pushes it past: that G entry is inf, the signed square root
keeps it inf, the L2 normalisation divides inf by inf, and the logits and loss are NaN. Which step
that is depends on the seed. A GradScaler cannot help: it scales gradients, not forward
activations.

ORIGIN: ``bilinear``, the pooling module whose float16 ``bmm`` overflows (the conv feature maps
before it stay finite, about 100 at their largest).
Fixed: the same run with the bilinear pooling computed in float32 (autocast disabled inside the
module, its input upcast), as B-CNN code does for its matrix products; the model's function is
unchanged.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "bilinear"
SOURCE = (
    "Lin, RoyChowdhury & Maji 2015, 'Bilinear CNN Models for Fine-grained Visual Recognition' "
    "(sum-pooled outer products of VGG conv5 features, signed sqrt, L2 norm) and PyTorch forum "
    "reports of Gram-matrix / bilinear pooling (style transfer, B-CNN) giving inf/NaN under "
    "float16 autocast; the fix runs the product in float32."
)


class BilinearPool(nn.Module):
    """Sum-pooled outer products over positions, normalised by the count, signed sqrt, L2."""

    def __init__(self, fp32: bool) -> None:
        super().__init__()
        self.fp32 = fp32

    def _pool(self, f: torch.Tensor) -> torch.Tensor:
        x = f.flatten(2)  # (B, C, HW)
        g = torch.bmm(x, x.transpose(1, 2)) / x.shape[2]
        g = torch.sign(g) * torch.sqrt(g.abs() + 1e-5)
        return nn.functional.normalize(g.flatten(1), dim=1)

    def forward(self, f: torch.Tensor) -> torch.Tensor:
        if self.fp32:
            with torch.autocast(device_type="cpu", enabled=False):
                return self._pool(f.float())
        return self._pool(f)


class BCNN(nn.Module):
    def __init__(self, channels: int, classes: int, fp32_pool: bool) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
        )
        self.bilinear = BilinearPool(fp32_pool)
        self.head = nn.Linear(channels * channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.bilinear(self.features(x)))


def _data(seed: int, steps: int, batch: int, size: int, classes: int) -> list:
    """Oriented gratings (one orientation and frequency per class) with random phase, noise and
    a log-normal contrast per image."""
    g = torch.Generator().manual_seed(170_000 + seed)
    theta = torch.arange(classes, dtype=torch.float32) * 3.1416 / classes
    freq = 0.5 + 0.6 * torch.rand(classes, generator=g)
    coords = torch.arange(size, dtype=torch.float32)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        phase = 6.283 * torch.rand(batch, 1, 1, generator=g)
        t = torch.cos(theta[y]).view(-1, 1, 1) * xx + torch.sin(theta[y]).view(-1, 1, 1) * yy
        img = torch.sin(freq[y].view(-1, 1, 1) * t + phase)
        img = img + 0.3 * torch.randn(batch, size, size, generator=g)
        contrast = torch.exp(0.5 * torch.randn(batch, 1, 1, generator=g))
        batches.append(((img * contrast).unsqueeze(1), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([8, 12, 16])
    size = rng.choice([12, 16])
    classes = rng.choice([3, 4, 6])
    batch = rng.choice([16, 32])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([1e-2, 2e-2])
    backbone_lr = rng.choice([5e-5, 1e-4])
    use_scaler = rng.choice([True, False])
    # Fraction of batches whose peak G entry exceeds 65504 with the "pretrained" scale.
    over = rng.choice([0.02, 0.03, 0.05])

    batches = _data(seed, steps, batch, size, classes)
    torch.manual_seed(seed)
    model = BCNN(channels, classes, fp32_pool=fixed)
    with torch.no_grad():
        # The "pretrained" scale of the last conv: with the initial weights, a fraction `over`
        # of the batches has a peak sum-pooled product above the float16 maximum.
        peaks = []
        for x, _ in batches:
            f = model.features(x).flatten(2)
            peaks.append(float(torch.bmm(f, f.transpose(1, 2)).max()))
        peaks.sort()
        q = peaks[min(len(peaks) - 1, int((1.0 - over) * len(peaks)))]
        k = (65504.0 / q) ** 0.5  # G scales with the square of the features
        model.features[3].weight.mul_(k)
        model.features[3].bias.mul_(k)
    opt = torch.optim.Adam(
        [
            {"params": model.features.parameters(), "lr": backbone_lr},
            {"params": model.head.parameters(), "lr": lr},
        ]
    )
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10) if use_scaler else None
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.float16,
        "scaler": scaler,
    }
