"""bad_init: a norm-free Perceiver whose weights are drawn with std 1.0 instead of 0.02.

Mechanism: a small Perceiver regresses summary statistics of a set of sensor readings (each
token is one reading of F = 12-16 features; the target is a standardised vector of set-level
statistics). A learned latent array cross-attends to the embedded tokens, then 3-4 latent
self-attention blocks (residual attention + residual ReLU MLP) refine it, and a head reads the
mean latent. The blocks are written without LayerNorm (a "norm-free" compact variant). The
weight init follows the Hugging Face ``_init_weights`` pattern (``normal_(std=
initializer_range)``) but the config's ``initializer_range`` is 1.0 rather than 0.02 (a value
copied from an embedding-scale config): every Linear then has weights of std 1, i.e. a gain of
about sqrt(fan_in) = 4-8 per layer instead of about 1. The embedding already returns features
4-8x larger than its input, the value and output projections of each attention multiply that
again, each residual MLP branch multiplies the stream by about fan_in, and because a residual
block adds its branch to the stream the scale grows geometrically with depth: at step 0 the
output is 1e12-1e16 times too large and the attention logits q.k are so large that every
softmax row is one-hot. The MSE loss starts at 1e25 or more (float32 still holds it); the first
updates are driven by gradients of the same size and within a few steps the forward pass
overflows to inf/NaN. Seeds change the width, depth, number of latents, set size, batch and lr.

ORIGIN: ``embed``, the token embedding, the first re-initialised layer the data passes through
and where the geometric growth starts (every layer after it multiplies the scale again).
Fixed: the same model, data and optimizer with a proper init: xavier_uniform_ for every Linear
weight, zero biases, the output projection of each residual branch scaled by (number of
branches)^-1/2 (GPT-2's residual scaling, which a norm-free residual stack needs) and the
latent array at std 0.02 (as in the Perceiver reference code).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "bad_init"
ORIGIN = "embed"
SOURCE = (
    "Jaegle et al. 2021 (Perceiver: latent array cross-attending to the inputs, then latent "
    "self-attention) and the Hugging Face `_init_weights` pattern normal_(std="
    "config.initializer_range) with initializer_range 0.02; forum reports of transformer "
    "losses in the 1e10s then NaN from the first step after initializer_range was set to 1.0."
)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)

    def forward(self, query: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, nq, d = query.shape
        nk = context.shape[1]
        h = self.heads
        q = self.q(query).view(b, nq, h, d // h).transpose(1, 2)
        k = self.k(context).view(b, nk, h, d // h).transpose(1, 2)
        v = self.v(context).view(b, nk, h, d // h).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // h) ** 0.5, dim=-1)
        return self.o((att @ v).transpose(1, 2).reshape(b, nq, d))


class Block(nn.Module):
    """Residual attention (cross when ``context`` is given) then a residual ReLU MLP."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.attn = Attention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))

    def forward(self, z: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        z = z + self.attn(z, z if context is None else context)
        return z + self.mlp(z)


class Perceiver(nn.Module):
    def __init__(self, features: int, dim: int, latents: int, depth: int, outputs: int) -> None:
        super().__init__()
        self.embed = nn.Linear(features, dim)
        self.latents = nn.Parameter(torch.zeros(latents, dim))
        self.cross = Block(dim, heads=1)
        self.blocks = nn.ModuleList([Block(dim, heads=2) for _ in range(depth)])
        self.head = nn.Linear(dim, outputs)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        z = self.latents.unsqueeze(0).expand(tokens.shape[0], -1, -1)
        z = self.cross(z, x)
        for block in self.blocks:
            z = block(z)
        return self.head(z.mean(dim=1))


def _init_weights(model: Perceiver, initializer_range: float, fixed: bool) -> None:
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                if fixed:
                    nn.init.xavier_uniform_(module.weight)
                else:
                    module.weight.normal_(0.0, initializer_range)
                module.bias.zero_()
        if fixed:  # GPT-2 style: residual-branch outputs scaled by (number of branches)^-1/2
            for block in [model.cross, *model.blocks]:
                for last in (block.attn.o, block.mlp[2]):
                    last.weight.mul_((2 * (len(model.blocks) + 1)) ** -0.5)
        model.latents.normal_(0.0, 0.02)


def _data(seed: int, steps: int, batch: int, tokens: int, features: int) -> list:
    """Sets of readings from a few latent sources mixed into F channels; the targets are the
    (standardised) per-set source means and spreads, which need pooling over the set."""
    g = torch.Generator().manual_seed(310_000 + seed)
    sources = 3
    mix = torch.randn(sources, features, generator=g) / sources**0.5
    raw_x, raw_y = [], []
    for _ in range(steps):
        centre = torch.randn(batch, 1, sources, generator=g)
        spread = 0.3 + torch.rand(batch, 1, sources, generator=g)
        s = centre + spread * torch.randn(batch, tokens, sources, generator=g)
        x = s @ mix + 0.1 * torch.randn(batch, tokens, features, generator=g)
        raw_x.append(x)
        raw_y.append(torch.cat([s.mean(dim=1), s.std(dim=1)], dim=1))
    ys = torch.stack(raw_y)
    mu, sd = ys.mean(dim=(0, 1)), ys.std(dim=(0, 1))
    return [(x, (y - mu) / sd) for x, y in zip(raw_x, raw_y, strict=True)]


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    features = rng.choice([12, 16])
    dim = rng.choice([16, 24, 32])
    latents = rng.choice([4, 6, 8])
    depth = rng.choice([3, 4])
    tokens = rng.choice([16, 24, 32])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([80, 100, 120])
    lr = rng.choice([5e-4, 1e-3, 2e-3])

    torch.manual_seed(seed)
    model = Perceiver(features, dim, latents, depth, outputs=6)
    _init_weights(model, initializer_range=1.0, fixed=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, tokens, features),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
