"""Wide & Deep regression model hit by one batch carrying sentinel values.

Mechanism
---------
A Wide & Deep model (wide: linear over categorical crosses + dense features;
deep: categorical embeddings + dense features -> MLP) regresses a standardised
target (e.g. log trip duration) from a tabular feed, trained with SGD +
momentum.  The dense features are standardised with statistics computed on a
clean sample.  Part-way through the run, one batch comes from a shard in which
an upstream join failed: a handful of rows carry the sentinel ``99999`` in the
"distance" / "duration" columns, which after standardisation is a feature of
~1e4-1e5 sigma, and the target column is the same sentinel.  That single
batch produces a loss ~1e9 and a gradient ~1e4-1e5x the usual one; the SGD
step moves the first-layer and wide weights by orders of magnitude, the next
clean batches produce huge predictions and the momentum-driven updates
overflow to inf/NaN a few steps later.  Every batch before and after is clean.

Fix
---
Validate the feed: rows whose standardised dense features or targets are
beyond a sanity bound (|z| > 50) are dropped before the step.  Everything else
(model, optimiser, data order) is unchanged and the run trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Recurring 'loss suddenly becomes NaN mid-epoch' reports (PyTorch forums, "
          "Kaggle NYC-taxi / tabular competitions) traced to sentinel values such as "
          "99999 or -999 for missing entries in a few rows of the CSV; Cheng et al. 2016 "
          "Wide & Deep architecture")


class WideAndDeep(nn.Module):
    def __init__(self, cards, n_cross, n_dense, emb_dim, hid):
        super().__init__()
        self.wide_cross = nn.EmbeddingBag(n_cross, 1, mode="sum")
        self.wide_dense = nn.Linear(n_dense, 1)
        self.embs = nn.ModuleList(nn.Embedding(c, emb_dim) for c in cards)
        d_in = emb_dim * len(cards) + n_dense
        self.deep = nn.Sequential(nn.Linear(d_in, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(),
                                  nn.Linear(hid, 1))

    def forward(self, cats, crosses, dense):
        wide = self.wide_cross(crosses) + self.wide_dense(dense)
        deep_in = torch.cat([e(cats[:, i]) for i, e in enumerate(self.embs)] + [dense], dim=1)
        return (wide + self.deep(deep_in)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    cards = [[12, 7, 24], [10, 7, 24, 5], [16, 7, 24]][seed % 3]
    n_dense = [6, 8, 5][seed % 3]
    emb_dim = 8
    hid = [64, 48, 64][seed % 3]
    B = 64
    steps = 200
    bad_step = [90, 110, 130][seed % 3]
    lr = [0.02, 0.03, 0.02][seed % 3]

    # hashed crosses of pairs of categorical columns
    n_cross = 256
    # ground truth: additive effects of categories + nonlinear dense effects
    cat_eff = [0.5 * torch.randn(c, generator=g) for c in cards]
    w_dense = torch.randn(n_dense, generator=g) / n_dense ** 0.5
    cross_eff = 0.3 * torch.randn(n_cross, generator=g)

    batches = []
    for step in range(steps):
        cats = torch.stack([torch.randint(0, c, (B,), generator=g) for c in cards], dim=1)
        crosses = torch.stack([(cats[:, 0] * 31 + cats[:, 1]) % n_cross,
                               (cats[:, 1] * 17 + cats[:, 2]) % n_cross], dim=1)
        dense = torch.randn(B, n_dense, generator=g)
        y = sum(cat_eff[i][cats[:, i]] for i in range(len(cards)))
        y = y + cross_eff[crosses].sum(1) + dense @ w_dense + 0.3 * torch.tanh(dense[:, 0] * dense[:, 1])
        y = y + 0.1 * torch.randn(B, generator=g)
        y = (y - 0.0) / 1.2
        if step == bad_step:
            # corrupt shard: sentinel 99999 in two raw columns of a few rows, standardised
            rows = torch.randperm(B, generator=g)[:4]
            dense[rows, 0] = (99999.0 - 12.0) / 3.5
            dense[rows, 1] = (99999.0 - 30.0) / 9.0
            y[rows] = 99999.0
        if fixed:
            ok = (dense.abs() < 50).all(1) & (y.abs() < 50)
            cats, crosses, dense, y = cats[ok], crosses[ok], dense[ok], y[ok]
        batches.append(((cats, crosses, dense), y))

    model = WideAndDeep(cards, n_cross, n_dense, emb_dim, hid)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
