"""data_outlier in a ReLU recommender (user/item embeddings + dense features): a sentinel row.

Setting: a watch-time recommender. Each example is (user id, item id, 5-8 dense features) and
the target is the standardised watch time (mean ~0, variance ~1). The dense features (log price,
user tenure, item age, hour of day, ..., session length, distance to the nearest store) are
z-scored, so they are of order 1. The model concatenates a user embedding, an item embedding and
a Linear+ReLU projection of the dense features (``dense_proj``) and feeds them to a 3-layer ReLU
MLP that predicts the target under MSE (or Huber on some feature-outlier seeds). Training is
calm (the loss falls from ~1 to ~0.25) until one batch, at a seed-dependent step between 30% and
70% of the run, carries 1-3 corrupt rows:

* ``sentinel`` (seeds 0, 4, ...; SGD + momentum): a dense feature holds the missing-value code
  9999999 of the upstream table (9.99e6) instead of a z-score: a finite outlier;
* ``flt_max`` (seeds 1, 5, ...; AdamW): "distance to the nearest store" is a minimum over an
  empty list of stores for users without a location, so it stays at its initial value
  FLT_MAX = 3.4028235e38: a finite float32;
* ``target`` (seeds 2, 6, ...; SGD + Nesterov momentum): the label holds the sentinel 9999999 or
  a raw watch time in milliseconds (1e5 or 1e6) instead of the standardised value: a finite
  outlier in the target;
* ``unit_mixup`` (seeds 3, 7, ...; SGD + momentum): the session-length feature of the corrupt
  rows arrives in milliseconds (1.8e5-1.1e7) instead of standardised hours.

Mechanism (SGD seeds). A 1e5-1e7 feature makes the ``dense_proj`` units that read it output
~1e5-1e7 and the prediction of that row ~1e5-1e7 (a 1e5-1e7 target does the same to the
residual). The MSE gradient with respect to the prediction is 2 (prediction - target) / batch,
~1e4-1e6 (Huber caps it at 1 / batch), and every weight's gradient is that times its input
activation, ~1e5-1e7 on the corrupt row: many orders of magnitude above the usual one. SGD
multiplies it by an ordinary lr (0.01-0.02), so some weights move by tens to 1e8 in one step
(the usual step is ~1e-3), in the direction that lowers that one row's error, and the momentum
buffer keeps pushing that way for ~10 more steps. As a consequence the clean batches that follow
get absurd predictions (their loss 1e4-1e22), whose gradients throw the weights further, and the
loss reaches inf/NaN 1-5 steps after the corrupt batch on almost every seed. On a few seeds
(e.g. 7, Huber) the huge steps instead throw most MLP ReLU units far negative for clean rows:
half or more of them die (against ~10% in the fixed run), the rest cannot refit the target,
and the loss sits near the untrained model's level for the rest of the run (a finite stall).

Why the AdamW seed uses FLT_MAX: Adam divides each step by the running RMS of the gradient, so
a single 1e5-1e7 outlier moves each parameter by at most ~3 x lr and the run absorbs it
(measured while writing this family: a 9.99e6 feature or a 1e6 target under Adam/AdamW at lr
2e-3-3e-3 ends at the clean run's loss, so such runs are no failure). FLT_MAX is finite, but
the prediction of that row is ~1e37 and its square overflows float32: the MSE is inf at the
corrupt step, the gradients are inf/NaN and the AdamW update writes NaN into the weights.

ORIGIN is None: the failure starts in the input batch, not in a module (``dense_proj`` is only
the first layer that reads a corrupt feature, and the target seeds corrupt no input at all).
Fixed: the same batches (same rows, order, init, optimizer, loss and lr), with the corrupt
values replaced by their clean standardised values. The fixed run trains to ~0.2-0.3 (MSE).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum / Stack Overflow threads 'regression loss goes to NaN (or the network only "
    "predicts the mean) after a few hundred iterations' traced to a sentinel 9999999 for missing "
    "values, a column in the wrong unit (milliseconds) or a default FLT_MAX left in one feature "
    "or label column; filtering or clipping the rows fixes it."
)

SENTINEL = 9999999.0
FLT_MAX = 3.4028234663852886e38


class Recommender(nn.Module):
    def __init__(self, users: int, items: int, emb: int, dense: int, proj: int, width: int) -> None:
        super().__init__()
        self.user_emb = nn.Embedding(users, emb)
        self.item_emb = nn.Embedding(items, emb)
        nn.init.normal_(self.user_emb.weight, std=0.1)
        nn.init.normal_(self.item_emb.weight, std=0.1)
        self.dense_proj = nn.Sequential(nn.Linear(dense, proj), nn.ReLU())
        self.mlp = nn.Sequential(
            nn.Linear(2 * emb + proj, width),
            nn.ReLU(),
            nn.Linear(width, width),
            nn.ReLU(),
            nn.Linear(width, 1),
        )

    def forward(
        self, users: torch.Tensor, items: torch.Tensor, dense: torch.Tensor
    ) -> torch.Tensor:
        z = torch.cat([self.user_emb(users), self.item_emb(items), self.dense_proj(dense)], dim=1)
        return self.mlp(z).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    n_users = rng.choice([200, 300, 400])
    n_items = rng.choice([100, 200, 300])
    emb = rng.choice([8, 16])
    dense = rng.choice([5, 6, 8])
    proj = rng.choice([16, 24, 32])
    width = rng.choice([32, 64, 96])
    batch = rng.choice([32, 64, 128])
    steps = rng.choice([150, 200, 250])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = ["sentinel", "flt_max", "target", "unit_mixup"][seed % 4]
    n_bad = rng.choice([1, 2, 3])
    if kind == "flt_max":
        optim = "adamw"
        lr = rng.choice([2e-3, 3e-3])
    else:
        optim = "nesterov" if kind == "target" else "sgd"
        lr = rng.choice([0.01, 0.015, 0.02])
    target_value = rng.choice([SENTINEL, 1e5, 1e6])
    # feature-outlier seeds train under MSE or Huber; a Huber loss would itself be the fix for an
    # absurd target, and it keeps FLT_MAX's loss finite, so those two kinds use MSE
    huber = rng.choice([True, False]) and kind in ("sentinel", "unit_mixup")

    g = torch.Generator().manual_seed(63_000 + seed)
    user_f = torch.randn(n_users, 4, generator=g)
    item_f = torch.randn(n_items, 4, generator=g)
    w_dense = torch.randn(dense, generator=g)
    w_dense = w_dense / w_dense.norm()
    dist_col, session_col = dense - 1, dense - 2  # distance_z, session_len_z
    batches = []
    for step in range(steps):
        u = torch.randint(0, n_users, (batch,), generator=g)
        i = torch.randint(0, n_items, (batch,), generator=g)
        x = torch.randn(batch, dense, generator=g)
        y = 0.25 * (user_f[u] * item_f[i]).sum(1) + x @ w_dense + 0.5 * torch.relu(x[:, 0])
        y = (y - 0.2 + 0.3 * torch.randn(batch, generator=g)) / 1.2  # ~zero mean, unit variance
        rows = torch.randperm(batch, generator=g)[:n_bad]
        col = int(torch.randint(0, dense, (1,), generator=g))
        hours = 0.05 + 3.0 * torch.rand(n_bad, generator=g)  # raw session lengths
        if step == bad_step and not fixed:
            x, y = x.clone(), y.clone()
            if kind == "sentinel":
                x[rows, col] = SENTINEL
            elif kind == "flt_max":
                x[rows, dist_col] = FLT_MAX
            elif kind == "unit_mixup":
                x[rows, session_col] = hours * 3.6e6  # milliseconds, 1.8e5-1.1e7
            else:
                y[rows] = target_value
        batches.append(((u, i, x), y))

    torch.manual_seed(seed)
    model = Recommender(n_users, n_items, emb, dense, proj, width)
    if optim == "adamw":
        opt: torch.optim.Optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    else:
        opt = torch.optim.SGD(
            model.parameters(), lr=lr, momentum=0.9, nesterov=(optim == "nesterov")
        )
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.HuberLoss() if huber else nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
