"""Listwise learning-to-rank - an MLP scores every document of a query's
candidate list (LETOR-style query-document features), trained with a
hand-written ListMLE (Plackett-Luce likelihood of the relevance-sorted list)
computed the naive way: ``log(reverse_cumsum(exp(s))) - s``.

Mechanism: ListMLE's optimum is unbounded - on lists whose order the
features determine (editorial grade refined by click-through rate: an
almost strict order) it keeps pushing the scores apart - so with Adam the
score range widens steadily while the loss falls.  The naive implementation exponentiates the
raw scores: once the top document of some list scores above ~88.7, float32
``exp`` overflows to inf and the cumulative sums become inf; ``log(inf) -
inf`` and the inf/inf in the backward give NaN.  (Symmetrically, a list whose
tail scores fall below ~-104 has all-zero exp terms and log(0) = -inf.)  The
run is calm until the score range reaches that point, then the loss is
non-finite.

ORIGIN: ``scorer.4`` - the output Linear whose scores feed the unguarded
exp/cumsum/log (the unsafe op is in the loss right after it).

Fix: the stable form - ``torch.logcumsumexp`` over the reversed scores (the
log-sum-exp trick); model, data, optimiser unchanged.
"""
import random

import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "scorer.4"
SOURCE = ("ListMLE (Xia et al., ICML 2008); naive PyTorch ListMLE implementations using "
          "torch.log(torch.cumsum(torch.exp(...))) vs the max-shifted/logcumsumexp form used in "
          "allRank and TF-Ranking (listMLE loss overflow/NaN issues)")

N_FEAT = 32


class ListScorer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.scorer = nn.Sequential(nn.Linear(N_FEAT, width), nn.ReLU(),
                                    nn.Linear(width, width), nn.ReLU(),
                                    nn.Linear(width, 1))

    def forward(self, x):                    # x: (queries, docs, features)
        return self.scorer(x).squeeze(-1)


def _lists(g, n_q, n_docs, w):
    x = torch.randn(n_q, n_docs, N_FEAT, generator=g)
    # editorial grade refined by click-through rate: a (nearly) strict order within each list
    y = x @ w + 0.05 * torch.randn(n_q, n_docs, generator=g)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    width = r.choice([64, 128])
    lr = r.choice([5e-3, 1e-2, 2e-2])
    n_q = r.choice([16, 32])
    n_docs = r.choice([20, 30, 50])
    steps = r.choice([200, 250, 300])

    g = torch.Generator().manual_seed(16000 + seed)
    w = torch.randn(N_FEAT, generator=g) / N_FEAT ** 0.5 * 1.5
    batches = [_lists(g, n_q, n_docs, w) for _ in range(steps)]

    torch.manual_seed(seed)
    model = ListScorer(width)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def listmle(scores, y):
        order = y.argsort(dim=1, descending=True)       # the relevance-sorted permutation
        s = scores.gather(1, order)
        if fixed:
            tail = torch.logcumsumexp(s.flip(1), dim=1).flip(1)
        else:
            tail = torch.log(torch.cumsum(torch.exp(s).flip(1), dim=1).flip(1))
        return (tail - s).sum(1).mean()

    return dict(model=model, optimizer=opt, loss_fn=listmle, batches=batches, steps=steps)
