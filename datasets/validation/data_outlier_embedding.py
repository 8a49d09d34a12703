"""data_outlier in a text regressor: token embeddings, then a GRU or a pooled MLP (MSE, SGD).

Mechanism: a model reads short token sequences (ids in a small vocabulary) and regresses a
standardised score (a review rating, a price: here a scaled sum of per-token effects); the
encoder is a GRU or a per-sequence sum-pool followed by a ReLU layer, depending on the seed.
Training is calm until one batch, at a seed-dependent step in the middle of the run, carries one
corrupt record: its target is NaN (a missing value parsed as NaN) or 999999999 (the "missing"
sentinel of an export, or a unit mix-up). A NaN target makes the MSE loss NaN at once; a ~1e9
target makes the loss ~1e16 and the output gradient ~1e7, and the next SGD updates send the
weights to inf/NaN within a few steps. The inputs of that batch are ordinary token ids.

ORIGIN is None: the failure starts in the batch's targets, not in a module.
Fixed: the same batches, with the corrupt target replaced by its clean value.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum and Stack Overflow threads 'regression loss becomes NaN/inf after N "
    "iterations' traced to one NaN or sentinel (e.g. 999999999 for missing) target in the "
    "dataset; dropping or imputing the record fixes it."
)


class TextRegressor(nn.Module):
    def __init__(self, vocab: int, dim: int, hidden: int, encoder: str) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder_kind = encoder
        if encoder == "gru":
            self.encoder = nn.GRU(dim, hidden, batch_first=True)
        else:
            self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        e = self.embed(ids)
        if self.encoder_kind == "gru":
            h = self.encoder(e)[0][:, -1]
        else:
            h = self.encoder(e.sum(dim=1) / e.shape[1] ** 0.5)
        return self.head(h)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    encoder = rng.choice(["gru", "meanpool"])
    vocab = rng.choice([32, 64, 96])
    dim = rng.choice([16, 24, 32])
    hidden = rng.choice([16, 32, 48])
    seq_len = rng.choice([6, 8, 12])
    batch = rng.choice([32, 64])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([0.02, 0.05]) if encoder == "gru" else rng.choice([0.05, 0.1])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = rng.choice(["nan_target", "sentinel_target"])

    g = torch.Generator().manual_seed(150_000 + seed)
    effect = torch.randn(vocab, generator=g)
    batches = []
    for step in range(steps):
        ids = torch.randint(0, vocab, (batch, seq_len), generator=g)
        eff = effect[ids]
        y = eff.mean(dim=1) * seq_len**0.5
        y = (y + 0.1 * torch.randn(batch, generator=g)).unsqueeze(1)
        row = int(torch.randint(0, batch, (1,), generator=g))
        if step == bad_step and not fixed:
            y = y.clone()
            y[row, 0] = float("nan") if kind == "nan_target" else 999999999.0
        batches.append((ids, y))

    torch.manual_seed(seed)
    model = TextRegressor(vocab, dim, hidden, encoder)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
