"""Pairwise learning-to-rank (RankNet) over query-document features from a search feature store:
a 3-layer SiLU scoring MLP scores every document, and for each pair with different graded
relevance inside a query the loss is log(1 + exp(-(s_i - s_j))) averaged over pairs. The team's
previous production ranker was a linear RankNet trained with SGD + Nesterov at lr=5.0 (workable for a
convex linear model with a pair-averaged logistic loss); the same trainer config was reused for the MLP.
With three stacked layers and momentum 0.9 each update changes the scores by far more than the
score margins it is correcting: the score scale grows step after step, the pairwise losses of
misordered pairs grow with it, and within a few dozen steps the weights overflow and the loss
becomes non-finite. Fixed: lr = 0.5; model, loss, data and momentum are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Burges et al. 2005 RankNet pairwise loss; a linear model's SGD config reused for a deeper "
          "scorer (learning rate not retuned when the model changes)")

N_FEAT, N_DOCS = 16, 12


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_FEAT, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU(), nn.Linear(64, 1))

    def forward(self, feats):                       # (queries, docs, feat)
        return self.net(feats).squeeze(-1)


def loss_fn(scores, rel):
    diff = scores.unsqueeze(-1) - scores.unsqueeze(-2)           # s_i - s_j
    better = (rel.unsqueeze(-1) > rel.unsqueeze(-2)).float()
    return (F.softplus(-diff) * better).sum() / better.sum().clamp_min(1.0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Scorer()
    w = torch.randn(N_FEAT, generator=g) / N_FEAT ** 0.5
    steps, n_q = 120, 24
    batches = []
    for _ in range(steps):
        feats = torch.randn(n_q, N_DOCS, N_FEAT, generator=g)
        latent = feats @ w + 0.4 * feats[..., 2] * feats[..., 3] + 0.4 * torch.randn(n_q, N_DOCS, generator=g)
        rel = torch.bucketize(latent, torch.tensor([-0.8, 0.0, 0.8]))
        batches.append((feats, rel))
    opt = torch.optim.SGD(model.parameters(), lr=0.5 if fixed else 5.0, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
