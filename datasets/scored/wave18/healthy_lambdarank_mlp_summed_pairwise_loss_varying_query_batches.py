"""Healthy LambdaRank-style MLP ranker whose summed loss swings with the batch composition.

What looks alarming: every step takes a different number of queries (6-40) with lists of
different lengths (5-60 documents, padded and masked), and the LambdaRank objective is a
*sum* over all document pairs of |delta NDCG| * log(1 + exp(-(s_i - s_j))), not a mean.
The loss therefore jumps by 3-5x from one step to the next (a step with many long lists is
a "spike"), the |delta NDCG| weights are recomputed from the current ranking each step, and
the pairwise terms of already-correct pairs keep pushing scores apart, so the score scale
grows throughout training.

Why it is healthy: the swings are bookkeeping (number of pairs per batch), not instability;
the per-pair loss falls steadily, NDCG improves, and the summed loss of comparable batches
ends far below where it started.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("LambdaRank / LambdaLoss (Burges 2010; Wang et al. 2018) with |delta NDCG| pair "
          "weights, as in allRank / TF-Ranking; summed pairwise losses over variable-size "
          "query groups.")


class Scorer(nn.Module):
    def __init__(self, n_feat, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_feat, width), nn.ReLU(),
                                 nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, x):                        # (Q, N, F)
        return self.net(x).squeeze(-1)


def lambdarank_loss(scores, rel):
    valid = rel >= 0
    s = scores.masked_fill(~valid, -1e4)
    order = s.detach().argsort(dim=1, descending=True)
    ranks = torch.empty_like(order)
    ranks.scatter_(1, order, torch.arange(s.size(1)).expand_as(order).contiguous())
    gains = torch.where(valid, 2.0 ** rel.clamp_min(0) - 1, torch.zeros_like(rel))
    disc = 1.0 / torch.log2(ranks.float() + 2.0)
    ideal = gains.sort(dim=1, descending=True).values
    idcg = (ideal / torch.log2(torch.arange(s.size(1)).float() + 2.0)).sum(1, keepdim=True)
    pair = (rel.unsqueeze(2) > rel.unsqueeze(1)) & valid.unsqueeze(2) & valid.unsqueeze(1)
    delta = ((gains.unsqueeze(2) - gains.unsqueeze(1)) *
             (disc.unsqueeze(2) - disc.unsqueeze(1))).abs() / idcg.clamp_min(1e-6).unsqueeze(2)
    diff = scores.unsqueeze(2) - scores.unsqueeze(1)
    return (pair.float() * delta * F.softplus(-diff)).sum()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2400 + seed)
    n_feat = [24, 32, 16][seed]
    width = [64, 96, 48][seed]
    lr = [1e-3, 7e-4, 1.5e-3][seed]
    steps = [160, 180, 150][seed]
    w_true = torch.randn(n_feat, generator=g)

    batches = []
    for _ in range(steps):
        q = int(torch.randint(6, 41, (1,), generator=g))
        n_max = 60
        lens = torch.randint(5, n_max + 1, (q,), generator=g)
        x = torch.randn(q, n_max, n_feat, generator=g)
        u = x @ w_true / n_feat ** 0.5 + 0.3 * torch.tanh(x[..., 0] * x[..., 1])
        u = u + 0.3 * torch.randn(q, n_max, generator=g)
        rel = torch.bucketize(u, torch.tensor([0.5, 1.2, 1.8, 2.4])).float()   # grades 0..4
        pad = torch.arange(n_max).unsqueeze(0) >= lens.unsqueeze(1)
        rel = rel.masked_fill(pad, -1.0)
        x = x.masked_fill(pad.unsqueeze(-1), 0.0)
        batches.append((x, rel))

    model = Scorer(n_feat, width)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=lambdarank_loss, batches=batches,
                steps=steps)
