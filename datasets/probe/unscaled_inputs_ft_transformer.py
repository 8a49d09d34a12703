"""unscaled_inputs: an FT-Transformer regressor fed raw numeric columns and a raw-unit target.

Mechanism: an FT-Transformer (Gorishniy et al. 2021) for a house-price-like regression: every
numeric column j becomes a token ``x_j * W_j + b_j`` (the per-feature linear tokenizer), a
learned [CLS] token is prepended, one or two pre-LN transformer encoder blocks (self-attention
and a ReLU feed-forward, no dropout) mix the tokens, and a LayerNorm -> ReLU -> Linear head reads
the [CLS] token. The columns are in raw units, as loaded from the CSV: household income ~1e4-2e5,
floor area ~30-300 m^2, year built ~1900-2020, distance to the centre ~0.1-30 km, a room count
~1-8 and an amenity count ~0-2000; the target is the sale price in currency units (~3e4-5e5).
The pipeline never fits the ``StandardScaler`` / ``QuantileTransformer`` that the FT-Transformer
recipe applies to features and target.

So at step 0 the tokens of the income and year columns are ~1e3-1e5 in size while the others are
~1. The pre-LN blocks normalise each token before attention, and a token dominated by
``x_j * W_j`` normalises to nearly the same vector for every row: the columns' values are lost
(only their sign survives), while the un-normalised residual stream carries the huge raw tokens
on. The [CLS] output and the head's prediction are O(1), ~1e5 away from the target, and the MSE
loss is ~5e9-1e10 from the first step. AdamW at the paper's lr (3e-4 - 1e-3) moves each weight by
about lr per step whatever the gradient, so in a couple of hundred steps the head's output can
only grow by a few units: the loss stays at ~5e9, swinging with the batch's prices - a flat,
enormous loss, caused by the data's scale and not by the optimizer.

ORIGIN is None: as in the rest of the suite's unscaled_inputs families, the cause is in the data
pipeline (no scaling of the columns or the target), before any module. (If a module must be
named: ``tokenizer``, the per-feature tokenizer, is the first module to receive the raw columns.)
Fixed: the same model, optimizer and rows with each column standardised (z-score over the
training rows; the skewed income and amenity columns are log1p-ed first, as the recipe's
quantile transform would) and the target standardised likewise (log then z-score).
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = (
    "Gorishniy et al. 2021, 'Revisiting Deep Learning Models for Tabular Data' (FT-Transformer: "
    "feature tokenizer, [CLS] token, pre-LN blocks, AdamW, quantile-transformed features and "
    "standardised regression targets); the recurring 'loss is 1e10 and does not go down' reports "
    "for tabular regression (e.g. house prices) with raw-unit features and targets."
)


class FeatureTokenizer(nn.Module):
    """Column j -> x_j * W_j + b_j, one d-dimensional token per numeric column."""

    def __init__(self, n_features: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_features, dim))
        self.bias = nn.Parameter(torch.empty(n_features, dim))
        bound = 1.0 / math.sqrt(dim)
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.unsqueeze(-1) * self.weight + self.bias


class FTTransformer(nn.Module):
    def __init__(self, n_features: int, dim: int, heads: int, layers: int) -> None:
        super().__init__()
        self.tokenizer = FeatureTokenizer(n_features, dim)
        self.cls = nn.Parameter(torch.empty(1, 1, dim).uniform_(-(dim**-0.5), dim**-0.5))
        block = nn.TransformerEncoderLayer(
            dim, heads, dim_feedforward=2 * dim, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.ReLU(), nn.Linear(dim, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = self.tokenizer(x)
        tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), tokens], dim=1)
        return self.head(self.encoder(tokens)[:, 0])


def _houses(g: torch.Generator, n: int) -> tuple:
    """Raw-unit columns and price, with a price that depends on them non-linearly."""
    income = torch.exp(10.8 + 0.6 * torch.randn(n, generator=g)).clamp(8e3, 4e5)
    area = (40.0 + 0.0009 * income + 25.0 * torch.randn(n, generator=g)).clamp(25.0, 350.0)
    year = (1900.0 + 120.0 * torch.rand(n, generator=g)).round()
    dist = 30.0 * torch.rand(n, generator=g) ** 2 + 0.1
    rooms = (area / 30.0 + torch.rand(n, generator=g)).floor().clamp(1.0, 8.0)
    amenities = torch.exp(6.0 + 1.0 * torch.randn(n, generator=g) - 0.05 * dist).round()
    log_price = (
        11.0
        + 0.35 * torch.log(income / 5e4)
        + 0.8 * torch.log(area / 80.0)
        - 0.35 * torch.log1p(dist)
        + 0.003 * (year - 1960.0)
        + 0.05 * torch.log1p(amenities)
        + 0.05 * rooms
        + 0.08 * torch.randn(n, generator=g)
    )
    x = torch.stack([income, area, year, dist, rooms, amenities], dim=1)
    return x, torch.exp(log_price).unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    dim = rng.choice([16, 24, 32])
    heads = rng.choice([2, 4])
    layers = rng.choice([1, 2])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([120, 150, 180])
    lr = rng.choice([3e-4, 5e-4, 1e-3])

    g = torch.Generator().manual_seed(330_000 + seed)
    x_raw, y_raw = _houses(g, steps * batch)
    if fixed:
        x = x_raw.clone()
        x[:, [0, 5]] = torch.log1p(x[:, [0, 5]])  # the skewed columns, as a quantile map would
        x = (x - x.mean(dim=0)) / x.std(dim=0)
        y = torch.log(y_raw)
        y = (y - y.mean()) / y.std()
    else:
        x, y = x_raw, y_raw
    batches = [
        (x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch]) for i in range(steps)
    ]

    torch.manual_seed(seed)
    model = FTTransformer(x.shape[1], dim, heads, layers)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-5)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
