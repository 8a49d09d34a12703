"""fp16_overflow: fine-tuning a "pretrained" MLP encoder with very large activations under fp16.

Mechanism: the encoder comes from a checkpoint trained in fp32/bf16 whose output projection
``encoder.wo`` produces very large activations (tens of thousands; a LayerNorm right after it
makes the scale harmless in fp32 and bf16). The model is fine-tuned for classification under
``torch.autocast(float16)`` with a GradScaler. The inputs are heteroscedastic (per-sample
magnitudes are log-normal), so most batches keep ``wo``'s outputs below the float16 maximum
(65504) but the first batch carrying a large-magnitude sample pushes them past it: ``wo`` outputs
inf, the LayerNorm turns it into NaN and the loss is NaN. Which step that is depends on the seed.
A GradScaler cannot help: it scales gradients, not forward activations.

ORIGIN: ``encoder.wo``, the Linear whose float16 output overflows first.
Fixed: the same run with ``encoder.wo`` kept in float32 (autocast disabled around it), the fix
Hugging Face applied to T5 (``_keep_in_fp32_modules = ["wo"]``).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "encoder.wo"
SOURCE = (
    "Hugging Face transformers issues on T5 producing inf/NaN under fp16 (e.g. #10830, #14189): "
    "activations of the feed-forward output projection 'wo' exceed 65504; the fix keeps 'wo' in "
    "fp32 (_keep_in_fp32_modules) or uses bf16. See also Sun et al. 2024, Massive Activations."
)


class KeepFP32Linear(nn.Linear):
    """A Linear that runs in float32 even inside an autocast region."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast(device_type="cpu", enabled=False):
            return super().forward(x.float())


class Classifier(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int, keep_fp32: bool) -> None:
        super().__init__()
        wo_cls = KeepFP32Linear if keep_fp32 else nn.Linear
        self.encoder = nn.Sequential()
        self.encoder.add_module("fc", nn.Linear(d_in, hidden))
        self.encoder.add_module("act", nn.GELU())
        self.encoder.add_module("wo", wo_cls(hidden, hidden))
        self.encoder.add_module("norm", nn.LayerNorm(hidden))
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([16, 24, 32])
    hidden = rng.choice([64, 96, 128])
    classes = rng.choice([4, 6, 8])
    batch = rng.choice([32, 64])
    steps = rng.choice([200, 250, 300])
    lr = rng.choice([1e-3, 2e-3])
    # Fraction of batches whose peak |wo output| exceeds 65504 with the "pretrained" scale.
    over = rng.choice([0.02, 0.03, 0.04])

    g = torch.Generator().manual_seed(90_000 + seed)
    teacher = torch.randn(d_in, classes, generator=g)
    batches = []
    for _ in range(steps):
        u = torch.randn(batch, d_in, generator=g)
        y = (u @ teacher).argmax(dim=1)
        scale = torch.exp(0.35 * torch.randn(batch, 1, generator=g))  # heteroscedastic samples
        batches.append((u * scale, y))

    torch.manual_seed(seed)
    model = Classifier(d_in, hidden, classes, keep_fp32=fixed)
    with torch.no_grad():
        # The "pretrained" scale of wo: with the initial weights, a fraction `over` of the
        # batches has a peak |wo output| above the float16 maximum, the rest stays below it.
        model.encoder.wo.bias.zero_()
        peaks = sorted(float(model.encoder[:3](x).abs().max()) for x, _ in batches)
        q = peaks[min(len(peaks) - 1, int((1.0 - over) * len(peaks)))]
        model.encoder.wo.weight.mul_(65504.0 / q)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**12)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.float16,
        "scaler": scaler,
    }
