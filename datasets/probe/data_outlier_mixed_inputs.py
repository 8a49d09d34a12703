"""data_outlier in a recommendation model with two inputs: categorical ids and dense features.

Mechanism: a rating model in the style of a wide-and-deep / DLRM recommender reads a tuple
``(ids, dense)``: ``ids`` holds one id per categorical field (user bucket, item, category, ...)
looked up in a shared ``nn.Embedding`` table with per-field offsets, ``dense`` holds a few
numerical features (price, account age, session length, ...) standardised with the training
set's mean and std. The field embeddings and a linear projection of the dense features are
concatenated and fed to a small ReLU MLP that regresses a standardised rating (MSE, SGD with
momentum); the loop calls ``model(ids, dense)``. Training is calm until one batch, at a
seed-dependent step in the middle of the run, carries one corrupt record in a dense column:
either a unit mix-up upstream of the standardisation (a price logged in micro-units, a duration
in microseconds: the standardised value comes out around 1e7) or an ``inf`` (a division by a zero
count in the feature pipeline). The ``inf`` turns the dense projection, the MLP output and the
loss non-finite at once; the 1e7 value makes that record's prediction ~1e5-1e6, the batch loss
~1e9-1e11, and the gradient of the dense projection (input times error) larger still, so the
SGD update sends the weights to huge values and the next forward pass overflows to inf/NaN.
The ids of that batch and the targets are ordinary.
Seeds change the number of fields, the vocabulary per field, the embedding and hidden widths,
the number of dense features, the batch size, the lr, the corruption kind and the failing step.

ORIGIN is None: the failure starts in one batch's dense inputs, not in a module (the dense
projection is the first module to see the value but is itself fine).
Fixed: the same batches, with the corrupt value replaced by the record's clean standardised
value.
"""

from __future__ import annotations

import random

import torch
from torch import nn
from torch.nn import functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum and Kaggle threads 'loss becomes NaN after some iterations' in tabular and "
    "recommender models traced to one record with an inf or a wrongly scaled numerical "
    "feature (a division by zero, a unit mix-up before standardisation), e.g. the Criteo/DLRM "
    "practice of clipping and log-transforming dense features; dropping or fixing the record "
    "fixes it."
)


class Recommender(nn.Module):
    def __init__(self, vocab: list[int], emb_dim: int, n_dense: int, hidden: int) -> None:
        super().__init__()
        offsets = torch.tensor([0, *vocab[:-1]]).cumsum(0)
        self.register_buffer("offsets", offsets)
        self.embed = nn.Embedding(sum(vocab), emb_dim)
        self.dense_proj = nn.Linear(n_dense, emb_dim)
        self.mlp = nn.Sequential(
            nn.Linear((len(vocab) + 1) * emb_dim, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(hidden, 1)

    def forward(self, ids: torch.Tensor, dense: torch.Tensor) -> torch.Tensor:
        e = self.embed(ids + self.offsets)  # (batch, fields, emb_dim)
        d = F.relu(self.dense_proj(dense)).unsqueeze(1)
        h = torch.cat([e, d], dim=1).flatten(1)
        return self.head(self.mlp(h))


def _data(seed: int, steps: int, batch: int, vocab: list[int], n_dense: int) -> list:
    """Ratings = per-field id effects + a nonlinear function of the dense features + noise."""
    g = torch.Generator().manual_seed(310_000 + seed)
    effects = [torch.randn(v, generator=g) for v in vocab]
    wd = torch.randn(n_dense, generator=g) / n_dense**0.5
    out = []
    for _ in range(steps):
        ids = torch.stack([torch.randint(0, v, (batch,), generator=g) for v in vocab], dim=1)
        dense = torch.randn(batch, n_dense, generator=g)
        y = sum(eff[ids[:, i]] for i, eff in enumerate(effects)) / len(vocab) ** 0.5
        y = y + torch.tanh(dense @ wd) + 0.5 * (dense[:, 0] * dense[:, -1]).clamp(-2, 2)
        y = y + 0.1 * torch.randn(batch, generator=g)
        out.append((ids, dense, (y / 1.3).unsqueeze(1)))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    n_fields = rng.choice([3, 4, 5])
    vocab = [rng.choice([20, 50, 100]) for _ in range(n_fields)]
    emb_dim = rng.choice([8, 12, 16])
    n_dense = rng.choice([4, 6, 8])
    hidden = rng.choice([32, 48, 64])
    batch = rng.choice([64, 128])
    steps = rng.choice([100, 120, 150])
    lr = rng.choice([0.01, 0.02, 0.03])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = rng.choice(["unit_mixup", "inf"])

    data = _data(seed, steps, batch, vocab, n_dense)
    g = torch.Generator().manual_seed(320_000 + seed)
    row = int(torch.randint(0, batch, (1,), generator=g))
    col = int(torch.randint(0, n_dense, (1,), generator=g))
    batches = []
    for step, (ids, dense, y) in enumerate(data):
        if step == bad_step and not fixed:
            dense = dense.clone()
            clean = float(dense[row, col])
            dense[row, col] = float("inf") if kind == "inf" else 1.0e7 * (1.0 + abs(clean))
        batches.append(((ids, dense), y))

    torch.manual_seed(seed)
    model = Recommender(vocab, emb_dim, n_dense, hidden)
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
