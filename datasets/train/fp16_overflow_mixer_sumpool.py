"""fp16_overflow: the sum-pooling of an MLP-Mixer's tokens overflows float16 (image
classification under autocast float16 with a GradScaler, AdamW or SGD with momentum).

Mechanism: a small MLP-Mixer (linear patch embedding, 1-2 mixer blocks with pre-LayerNorm
token-mixing and channel-mixing MLPs on a residual stream) is fine-tuned from a "pretrained"
checkpoint whose patch embedding produces a large residual stream (values in the thousands, as
in models trained in fp32 or bf16; the LayerNorms make the scale harmless there). The classifier
pools the tokens with a SUM followed by a LayerNorm (``pool``): in fp32 this is the same as a
mean, because the LayerNorm removes the scale. Under ``torch.autocast(float16)`` the sum over
9-25 tokens is a float16 tensor: the images are heteroscedastic (per-image contrast is
log-normal), so most batches keep the pooled sums below the float16 maximum (65504), but the
first batch carrying a high-contrast image pushes them past it: the sum inside ``pool`` is inf,
its layer norm turns it into NaN, and the loss is NaN (the blocks before it stay finite). Which
step that is depends on the seed. The GradScaler cannot help: it scales gradients, not forward
activations.

ORIGIN: ``pool``, the module whose float16 result passes 65504 first (its token sum).
Fixed: the same run with ``pool`` computed in float32 (autocast disabled inside it, its input
cast with ``.float()``), the usual "keep this op in fp32" fix.
"""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "pool"
SOURCE = (
    "PyTorch AMP docs (float16 range, ops that should run in float32, autocast-disabled "
    "regions) and forum/issue threads on sum-reductions overflowing under fp16 autocast "
    "('loss is nan with amp', torch.sum in half precision returning inf); Tolstikhin et al. "
    "2021, MLP-Mixer."
)


class MixerBlock(nn.Module):
    def __init__(self, tokens: int, dim: int, token_hidden: int, channel_hidden: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, token_hidden), nn.GELU(),
                                       nn.Linear(token_hidden, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, channel_hidden), nn.GELU(),
                                         nn.Linear(channel_hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (batch, tokens, dim)
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class SumPoolNorm(nn.Module):
    """Sum over tokens, then a layer norm (scale-free in fp32, so 'sum or mean does not matter')."""

    def __init__(self, dim: int, keep_fp32: bool) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.keep_fp32 = keep_fp32

    def _pool(self, x: torch.Tensor) -> torch.Tensor:
        s = x.sum(dim=1)  # float16 under autocast: passes 65504 on high-contrast images
        return F.layer_norm(s, s.shape[-1:], self.weight.to(s.dtype), self.bias.to(s.dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.keep_fp32:
            with torch.autocast(device_type="cpu", enabled=False):
                return self._pool(x.float())
        return self._pool(x)


class Mixer(nn.Module):
    def __init__(self, size: int, patch: int, dim: int, blocks: int, classes: int,
                 keep_fp32: bool) -> None:
        super().__init__()
        self.patch = patch
        tokens = (size // patch) ** 2
        self.embed = nn.Linear(patch * patch, dim)
        self.blocks = nn.Sequential(*[MixerBlock(tokens, dim, 2 * tokens, 2 * dim)
                                      for _ in range(blocks)])
        self.pool = SumPoolNorm(dim, keep_fp32)
        self.head = nn.Linear(dim, classes)

    def tokens(self, img: torch.Tensor) -> torch.Tensor:
        p = self.patch
        t = img.unfold(2, p, p).unfold(3, p, p)  # (batch, 1, h, w, p, p)
        return t.reshape(img.shape[0], -1, p * p)

    def trunk(self, img: torch.Tensor) -> torch.Tensor:
        return self.blocks(self.embed(self.tokens(img)))

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.trunk(img)))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    patch = 4
    size = rng.choice([12, 16, 20])
    dim = rng.choice([16, 24, 32])
    blocks = rng.choice([1, 2])
    classes = rng.choice([4, 6, 8])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([100, 125, 150])
    optim = rng.choice(["adamw", "sgd"])
    lr = rng.choice([1e-3, 2e-3]) if optim == "adamw" else rng.choice([0.01, 0.02])
    # Fraction of batches whose peak |token sum| passes 65504 with the "pretrained" scale.
    over = rng.choice([0.02, 0.03, 0.04])

    g = torch.Generator().manual_seed(61_000 + seed)
    low = torch.randn(classes, 1, 4, 4, generator=g)
    templates = nn.functional.interpolate(low, size=(size, size), mode="bilinear",
                                          align_corners=False)
    templates = templates / templates.std(dim=(2, 3), keepdim=True)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        x = templates[y] + 0.8 * torch.randn(batch, 1, size, size, generator=g)
        contrast = torch.exp(0.35 * torch.randn(batch, 1, 1, 1, generator=g))
        batches.append((x * contrast, y))

    torch.manual_seed(seed)
    model = Mixer(size, patch, dim, blocks, classes, keep_fp32=fixed)
    with torch.no_grad():
        # The "pretrained" scale of the embedding: with the initial weights, a fraction `over`
        # of the batches has a peak |token sum| above the float16 maximum, the rest below it.
        peaks = sorted(float(model.trunk(x).sum(dim=1).abs().max()) for x, _ in batches)
        q = peaks[min(len(peaks) - 1, int((1.0 - over) * len(peaks)))]
        model.embed.weight.mul_(65504.0 / q)
        model.embed.bias.mul_(65504.0 / q)
    if optim == "adamw":
        opt: torch.optim.Optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
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
