"""fp16_overflow: a "pretrained" learnable Conv1d filterbank front-end overflows float16.

Mechanism: a multi-label audio tagger (which of K tones sound in a clip) in the style of
learnable front-ends (SincNet, LEAF, wav2vec's feature encoder): a strided ``nn.Conv1d``
filterbank on the raw waveform, a log compression ``log1p(|z|)`` and a per-channel normalisation
over time (InstanceNorm, in the spirit of PCEN), then a small Conv1d/ReLU back-end, max pooling
over time and a linear tagging head (BCE with logits). The front-end comes from a checkpoint
trained in fp32; because the log compression and the normalisation make the network nearly
insensitive to the filters' scale, the filter norms drifted to ~2500-4000 during pretraining
(no weight decay), so the filterbank's peak output per batch is ~3e4-4e4 on a typical batch and
more on loud clips. The model is fine-tuned under ``torch.autocast(float16)`` (with or without
a GradScaler, by seed), the front-end at a 1000x smaller lr so it keeps its scale. Autocast runs
the Conv1d in float16: the clip gain is log-normal, so most batches keep the largest filter
output below the float16 maximum (65504), but the first batch carrying a loud clip pushes one
output past it: that value is inf, ``log1p`` keeps it inf, the normalisation computes
inf - inf = NaN, and the loss is NaN. Which step that is depends on the seed (2-71 on seeds
0-9). A GradScaler cannot help: it scales gradients, not forward activations.

ORIGIN: ``frontend.conv``, the Conv1d whose float16 output overflows (the first non-finite
tensor of the run; the waveform entering it is at most ~35).
Fixed: the same run with the front-end computed in float32 (autocast disabled inside the
front-end module, its input upcast); after the log compression the values are small and the
back-end stays in float16. The model's function is unchanged.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "frontend.conv"
SOURCE = (
    "Ravanelli & Bengio 2018 'SincNet' and Zeghidour et al. 2021 'LEAF' (learnable filterbank "
    "front-ends with log compression), and PyTorch/fairseq issues on NaN losses under fp16 "
    "caused by inf activations of the convolutional feature encoder (fixed by running it in "
    "fp32)."
)


class Frontend(nn.Module):
    """Learnable filterbank: strided Conv1d on the waveform, log compression, then per-channel
    normalisation over time (InstanceNorm, as PCEN-style front-ends do)."""

    def __init__(self, filters: int, kernel: int, stride: int, fp32: bool) -> None:
        super().__init__()
        self.conv = nn.Conv1d(1, filters, kernel, stride=stride)
        self.norm = nn.InstanceNorm1d(filters, affine=True)
        self.fp32 = fp32

    def _compress(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(torch.log1p(self.conv(x).abs()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fp32:
            with torch.autocast(device_type="cpu", enabled=False):
                return self._compress(x.float())
        return self._compress(x)


class Tagger(nn.Module):
    def __init__(self, filters: int, kernel: int, stride: int, width: int, tags: int,
                 fp32_frontend: bool) -> None:
        super().__init__()
        self.frontend = Frontend(filters, kernel, stride, fp32_frontend)
        self.backend = nn.Sequential(
            nn.Conv1d(filters, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv1d(width, width, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveMaxPool1d(1),
            nn.Flatten(),
        )
        self.head = nn.Linear(width, tags)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backend(self.frontend(x)))


def _data(seed: int, steps: int, batch: int, length: int, tags: int) -> list:
    """Clips holding a random subset of K tones, plus noise, at a log-normal gain."""
    g = torch.Generator().manual_seed(350_000 + seed)
    freqs = torch.linspace(0.08, 0.9, tags)
    t = torch.arange(length, dtype=torch.float32)
    batches = []
    for _ in range(steps):
        y = (torch.rand(batch, tags, generator=g) < 0.4).float()
        phase = 6.283 * torch.rand(batch, tags, 1, generator=g)
        tones = torch.sin(freqs.view(1, -1, 1) * t + phase)  # (B, K, T)
        wave = (y.unsqueeze(2) * tones).sum(1) + 0.3 * torch.randn(batch, length, generator=g)
        gain = torch.exp(0.6 * torch.randn(batch, 1, generator=g))
        batches.append(((wave * gain).unsqueeze(1), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    filters = rng.choice([8, 12, 16])
    kernel, stride = rng.choice([(16, 4), (25, 5), (32, 8)])
    width = rng.choice([16, 24, 32])
    tags = rng.choice([4, 5, 6])
    length = rng.choice([256, 320, 400])
    batch = rng.choice([16, 32])
    steps = rng.choice([120, 150, 200])
    optim = rng.choice(["adamw", "momentum"])
    lr = rng.choice([5e-3, 1e-2]) if optim == "adamw" else rng.choice([0.05, 0.1])
    frontend_lr = lr * 1e-3
    use_scaler = rng.choice([True, False])
    # Fraction of batches whose peak front-end output exceeds 65504 at the "pretrained" scale.
    over = rng.choice([0.02, 0.03, 0.05])

    batches = _data(seed, steps, batch, length, tags)
    torch.manual_seed(seed)
    model = Tagger(filters, kernel, stride, width, tags, fp32_frontend=fixed)
    with torch.no_grad():
        # The "pretrained" filter scale: with it, a fraction `over` of the batches has a peak
        # filter output above the float16 maximum.
        peaks = sorted(float(model.frontend.conv(x).abs().max()) for x, _ in batches)
        q = peaks[min(len(peaks) - 1, int((1.0 - over) * len(peaks)))]
        k = 65504.0 / q
        model.frontend.conv.weight.mul_(k)
        model.frontend.conv.bias.mul_(k)
    groups = [
        {"params": model.frontend.parameters(), "lr": frontend_lr},
        {"params": [*model.backend.parameters(), *model.head.parameters()], "lr": lr},
    ]
    if optim == "adamw":
        opt: torch.optim.Optimizer = torch.optim.AdamW(groups, weight_decay=1e-2)
    else:
        opt = torch.optim.SGD(groups, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10) if use_scaler else None
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.BCEWithLogitsLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.float16,
        "scaler": scaler,
    }
