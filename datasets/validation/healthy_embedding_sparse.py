"""healthy (hard negative): matrix factorisation with sparse embeddings (SparseAdam or plain SGD).

Nothing is wrong. A recommender-style model predicts a (standardised) rating from a user and an
item: the dot product of their factor vectors plus a user bias and an item bias, every one of
them an ``nn.Embedding(sparse=True)``, trained with ``torch.optim.SparseAdam``, Adagrad or plain
SGD (the optimizers that accept sparse gradients), depending on the seed. Each step touches only
the rows of the users and items in the batch (item popularity is long-tailed), so most rows of
every embedding get no gradient at all, and the gradient of a table is a sparse tensor whose norm
is small next to the table's; the rows that are touched still learn and the loss falls to the
noise floor (slowly but steadily with plain SGD, where a rarely seen user moves by lr / batch).
A detector that reads zero gradients on most rows, or a sparse gradient, as vanishing gradients
or dead units is wrong here.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "PyTorch's nn.Embedding(sparse=True) with optim.SparseAdam / Adagrad / SGD (the documented "
    "optimizers that support sparse gradients), as in matrix-factorisation recommenders "
    "(Koren et al. 2009, 'Matrix Factorization Techniques for Recommender Systems')."
)


class MatrixFactorization(nn.Module):
    def __init__(self, users: int, items: int, factors: int) -> None:
        super().__init__()
        self.user = nn.Embedding(users, factors, sparse=True)
        self.item = nn.Embedding(items, factors, sparse=True)
        self.user_bias = nn.Embedding(users, 1, sparse=True)
        self.item_bias = nn.Embedding(items, 1, sparse=True)
        for table in (self.user, self.item):
            nn.init.normal_(table.weight, std=0.1)
        for table in (self.user_bias, self.item_bias):
            nn.init.zeros_(table.weight)

    def forward(self, u: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        dot = (self.user(u) * self.item(i)).sum(dim=1, keepdim=True)
        return dot + self.user_bias(u) + self.item_bias(i)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    users = rng.choice([200, 300, 500])
    items = rng.choice([100, 200, 300])
    rank = rng.choice([3, 4, 6])
    factors = rng.choice([8, 16, 32])
    batch = rng.choice([128, 256])
    steps = rng.choice([150, 200, 250])
    opt_kind = rng.choice(["sparse_adam", "adagrad", "sgd"])

    g = torch.Generator().manual_seed(220_000 + seed)
    pu = torch.randn(users, rank, generator=g)
    qi = torch.randn(items, rank, generator=g)
    bu = 0.5 * torch.randn(users, generator=g)
    bi = 0.5 * torch.randn(items, generator=g)
    # A long-tailed item popularity, as in real interaction logs.
    popularity = 1.0 / torch.arange(1, items + 1, dtype=torch.float32) ** 0.5
    batches = []
    for _ in range(steps):
        u = torch.randint(0, users, (batch,), generator=g)
        i = torch.multinomial(popularity, batch, replacement=True, generator=g)
        r = (pu[u] * qi[i]).sum(dim=1) / rank**0.5 + bu[u] + bi[i]
        r = r + 0.3 * torch.randn(batch, generator=g)
        batches.append(((u, i), (r / 1.3).unsqueeze(1)))

    torch.manual_seed(seed)
    model = MatrixFactorization(users, items, factors)
    params = list(model.parameters())
    opt: torch.optim.Optimizer
    if opt_kind == "sparse_adam":
        opt = torch.optim.SparseAdam(params, lr=rng.choice([0.01, 0.02]))
    elif opt_kind == "adagrad":
        opt = torch.optim.Adagrad(params, lr=rng.choice([0.1, 0.2]))
    else:  # the loss is a batch mean: a row seen once in a batch moves by lr / batch
        opt = torch.optim.SGD(params, lr=rng.choice([5.0, 6.0]))
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
