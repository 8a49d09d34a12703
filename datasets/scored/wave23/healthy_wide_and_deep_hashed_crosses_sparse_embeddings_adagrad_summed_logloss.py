"""HEALTHY - Wide & Deep CTR model (Cheng et al. 2016): a wide part of
hashed feature crosses (user-segment x ad-category, site x ad, device x
hour) as a sparse ``EmbeddingBag(..., 1, mode='sum', sparse=True)``, a deep
part over sparse field embeddings (``nn.Embedding(..., sparse=True)``) + MLP,
trained with Adagrad (which accepts sparse gradients) on the *summed* log
loss of each batch of impressions.

Why a naive monitor may flag it: the loss is a sum over 256-512 impressions,
so it starts in the hundreds; the embedding tables receive sparse gradients
that touch only the rows present in the batch, so almost every row of the
large tables has an exactly-zero update on almost every step (the hashed
wide table is 95-98% untouched per step), and Adagrad's per-row effective
step sizes differ by orders of magnitude between frequent and rare ids.
All of it is expected for this model: the summed loss is just the batch
size times the mean log loss, and it falls steadily as the model learns the
click structure.

ORIGIN: None (healthy).
"""
import random

import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Wide & Deep Learning for Recommender Systems (Cheng et al. 2016; wide part FTRL/Adagrad, "
          "deep part AdaGrad); PyTorch sparse embeddings with optim.Adagrad / SparseAdam; Criteo/"
          "Avazu-style hashed feature crosses")

N_USEG, N_AD, N_CAT, N_SITE, N_DEV, N_HOUR = 400, 600, 30, 200, 8, 24
HASH = 2 ** 15


class WideDeep(nn.Module):
    def __init__(self, dim, width):
        super().__init__()
        self.wide = nn.EmbeddingBag(HASH, 1, mode="sum", sparse=True)
        nn.init.zeros_(self.wide.weight)
        self.emb = nn.ModuleList([nn.Embedding(n, dim, sparse=True)
                                  for n in (N_USEG, N_AD, N_SITE, N_DEV, N_HOUR)])
        for e in self.emb:
            nn.init.normal_(e.weight, std=0.05)
        self.deep = nn.Sequential(nn.Linear(5 * dim, width), nn.ReLU(),
                                  nn.Linear(width, width // 2), nn.ReLU(),
                                  nn.Linear(width // 2, 1))

    def forward(self, fields, crosses):
        deep_in = torch.cat([e(fields[:, i]) for i, e in enumerate(self.emb)], 1)
        return (self.wide(crosses) + self.deep(deep_in)).squeeze(1)


def _impressions(g, n, lat_u, lat_a, ad_cat, site_b, hour_b, ad_b):
    useg = torch.randint(0, N_USEG, (n,), generator=g)
    ad = torch.randint(0, N_AD, (n,), generator=g)
    site = torch.randint(0, N_SITE, (n,), generator=g)
    dev = torch.randint(0, N_DEV, (n,), generator=g)
    hour = torch.randint(0, N_HOUR, (n,), generator=g)
    logit = (lat_u[useg] * lat_a[ad]).sum(1) + ad_b[ad] + site_b[site] + hour_b[hour] - 1.5
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    fields = torch.stack([useg, ad, site, dev, hour], 1)
    cat = ad_cat[ad]
    crosses = torch.stack([(useg * 7919 + cat * 104729) % HASH,
                           (site * 15485863 + ad * 32452843) % HASH,
                           (dev * 49979687 + hour * 86028121) % HASH], 1)
    return (fields, crosses), y


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    dim = r.choice([8, 16])
    width = r.choice([64, 128])
    lr = r.choice([0.05, 0.1])
    bs = r.choice([256, 384, 512])
    steps = r.choice([150, 200, 250])

    g = torch.Generator().manual_seed(19000 + seed)
    lat_u = torch.randn(N_USEG, 4, generator=g)
    lat_a = torch.randn(N_AD, 4, generator=g) * 0.5
    ad_cat = torch.randint(0, N_CAT, (N_AD,), generator=g)
    site_b = torch.randn(N_SITE, generator=g) * 1.5
    ad_b = torch.randn(N_AD, generator=g) * 1.5
    hour_b = 0.5 * torch.sin(torch.arange(N_HOUR).float() / 24 * 6.283)
    batches = [_impressions(g, bs, lat_u, lat_a, ad_cat, site_b, hour_b, ad_b) for _ in range(steps)]

    torch.manual_seed(seed)
    model = WideDeep(dim, width)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt,
                loss_fn=nn.BCEWithLogitsLoss(reduction="sum"), batches=batches, steps=steps)
