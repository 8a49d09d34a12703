"""DCN-v2 (stacked cross network + deep tower) CTR model over hashed categorical embeddings,
trained with SGD+momentum at the lr of the sparse logistic-regression baseline it replaced
(lr 3-4). The linear model tolerated it; here each cross layer multiplies by x0, so the
oversized first updates inflate the cross weights, cross terms grow polynomially, logits
and gradients run away and the loss goes inf/NaN within ~10-30 steps.
fixed=True lowers lr to 0.05; data, model, initialisation and momentum are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None  # the step size of the whole model, not one module
SOURCE = ("DCN-V2 (Wang et al. 2021, 'Improved Deep & Cross Network') with the hashing trick; known "
          "pattern of carrying over the large SGD step size of a sparse logistic-regression CTR baseline "
          "to a deep CTR model, whose multiplicative cross layers diverge (cs231n: update/weight ratio "
          "should be ~1e-3)")

N_DENSE, N_CAT, N_BUCKETS, EMB = 13, 8, 1000, 8
HASH_PRIME = 2654435761


class CrossLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x0, x):
        return x0 * self.lin(x) + x


class DCNv2(nn.Module):
    def __init__(self, n_cross=3, hidden=128):
        super().__init__()
        self.emb = nn.ModuleList([nn.Embedding(N_BUCKETS, EMB) for _ in range(N_CAT)])
        for e in self.emb:
            nn.init.normal_(e.weight, std=0.05)
        d = N_DENSE + N_CAT * EMB
        self.cross = nn.ModuleList([CrossLayer(d) for _ in range(n_cross)])
        self.deep = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, 1)

    def forward(self, dense, cat_ids):
        hashed = (cat_ids * HASH_PRIME) % N_BUCKETS          # hashing trick
        x0 = torch.cat([dense] + [e(hashed[:, i]) for i, e in enumerate(self.emb)], 1)
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        return self.head(self.deep(x)).squeeze(1)


def make_data(g, n):
    # dense: log1p(count) features, standardised as in the Criteo pipelines
    counts = torch.exp(torch.randn(n, N_DENSE, generator=g) * 1.2 + 1.0).floor()
    dense = torch.log1p(counts)
    dense = (dense - dense.mean(0)) / dense.std(0)
    # categorical ids with a Zipf-like popularity
    u = torch.rand(n, N_CAT, generator=g)
    cat_ids = (torch.exp(u * 9.0)).long()                  # ids 1..8100, heavy head
    w_dense = torch.randn(N_DENSE, generator=g) * 0.4
    id_effect = torch.randn(N_CAT, 9000, generator=g) * 0.6
    logit = dense @ w_dense * 2.0 - 1.2
    logit = logit + id_effect[torch.arange(N_CAT), cat_ids].sum(1) * 0.9
    logit = logit + 0.5 * dense[:, 0] * id_effect[0, cat_ids[:, 1]]     # a feature cross
    y = torch.bernoulli(torch.sigmoid(logit), generator=g)
    return dense, cat_ids, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    B, steps = 256, 200
    dense, cat_ids, y = make_data(g, B * steps)
    batches = [((dense[i * B:(i + 1) * B], cat_ids[i * B:(i + 1) * B]), y[i * B:(i + 1) * B])
               for i in range(steps)]
    model = DCNv2()
    # lr tuned for the sparse logistic-regression baseline (hashed one-hots get rare, tiny
    # gradients, so it ran at lr 3-4); fixed: a step size suited to the dense DCN.
    lr = 0.05 if fixed else 3.0 + 1.0 * float(torch.rand(1, generator=g))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
