"""Deep Crossing (Shan et al., KDD 2016) sponsored-search click model: each
input feature (letter-trigram count vectors of the query, the ad keyword and
the ad title, plus a few count features) goes through its own embedding layer
max(0, W x + b), the embeddings are stacked, passed through a stack of
residual units relu(x + W2 relu(W1 x + b1) + b2) and a logistic scoring layer.
Trained with BCEWithLogitsLoss and momentum SGD.

Mechanism: the learning rate was tuned at batch size 32 and then multiplied
by batch/32 (the "linear scaling rule") for the large-batch run, without the
warmup that rule requires.  All inputs are non-negative counts, so in the very
first steps each embedding unit's weight gradient has the same sign for every
feature of every sample; the oversized momentum-SGD steps push the weights and
biases of the embedding units far negative and the ReLU of the embedding
layers becomes zero for every (non-negative) input.  With the stacked vector
at zero the residual units only see their biases, the gradient to all
embedding weights is exactly zero, and the click loss plateaus at the level a
constant predictor reaches.

ORIGIN is ``embed.query.1``: the ReLU of the first (and widest) embedding
projection is where units die first; the other embedding ReLUs follow.

Fix: the learning rate tuned for the small batch (no linear scaling), same
everything else.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "embed.query.1"
SOURCE = ("Deep Crossing (Microsoft, KDD'16) residual units on trigram-count "
          "features; linear lr scaling rule applied without warmup (Goyal et al. 2017 caveat)")


class ResidualUnit(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, d)
        self.act = nn.ReLU()
        self.out_act = nn.ReLU()

    def forward(self, x):
        return self.out_act(x + self.fc2(self.act(self.fc1(x))))


class DeepCrossing(nn.Module):
    def __init__(self, dims, emb, n_units, hidden):
        super().__init__()
        self.names = list(dims)
        self.embed = nn.ModuleDict({k: nn.Sequential(nn.Linear(d, emb[k]), nn.ReLU()) for k, d in dims.items()})
        stack = sum(emb.values())
        self.units = nn.Sequential(*[ResidualUnit(stack, hidden) for _ in range(n_units)])
        self.score = nn.Linear(stack, 1)

    def forward(self, query, keyword, title):
        feats = dict(query=query, keyword=keyword, title=title)
        h = torch.cat([self.embed[k](feats[k]) for k in self.names], dim=1)
        return self.score(self.units(h)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(vq=300, vk=200, vt=400, units=3, hidden=64, bs=512, base_lr=0.3, steps=100),
        dict(vq=250, vk=150, vt=300, units=2, hidden=96, bs=448, base_lr=0.4, steps=110),
        dict(vq=400, vk=250, vt=300, units=4, hidden=48, bs=384, base_lr=0.4, steps=90),
    ][seed % 3]
    lr = cfg["base_lr"] if fixed else cfg["base_lr"] * cfg["bs"] / 32    # linear scaling, no warmup
    g = torch.Generator().manual_seed(31337 + seed)
    n = 6000
    dims = dict(query=cfg["vq"], keyword=cfg["vk"], title=cfg["vt"])

    def counts(v, density):
        m = (torch.rand(n, v, generator=g) < density).float()
        return m * torch.randint(1, 4, (n, v), generator=g).float()

    q, k, t = counts(cfg["vq"], 0.03), counts(cfg["vk"], 0.04), counts(cfg["vt"], 0.025)
    topics = 6
    pq = torch.randn(cfg["vq"], topics, generator=g)
    pk = torch.randn(cfg["vk"], topics, generator=g)
    pt = torch.randn(cfg["vt"], topics, generator=g)
    zq, zk, zt = q @ pq, k @ pk, t @ pt
    logit = (zq * zk).sum(1) * 0.6 + (zq * zt).sum(1) * 0.3 + zk.sum(1) * 0.5
    logit = (logit - logit.mean()) / logit.std() * 3.0 - 1.0
    y = torch.bernoulli(torch.sigmoid(logit), generator=g)

    torch.manual_seed(seed)
    model = DeepCrossing(dims, dict(query=64, keyword=32, title=64), cfg["units"], cfg["hidden"])
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n, (cfg["bs"],), generator=g)
        batches.append(((q[idx], k[idx], t[idx]), y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
