"""Uncertain knowledge-graph embedding (UKGE-style): a DistMult scorer
<e_h, w_r, e_t> is mapped by a logistic head to a confidence in [0, 1] and
regressed with MSE on the per-triple confidence of an uncertain KG
(ConceptNet / NL27k-like), with corrupted-tail negatives at confidence 0.

Mechanism: the first shard of the triple file came from a different export in
which the confidence column is a percentage (0-100) instead of a probability.
Those 2-3 batches arrive at the very start of training.  The MSE residual of a
sigmoid output against targets of ~30-100 is ~100x the normal residual, so the
first Adam steps see gradients ~100x larger than anything after them.  Adam's
second-moment estimate v (beta2 = 0.999) is inflated by ~1e4 and decays only
over thousands of steps, so for the rest of the run every relation embedding,
the logistic head and the entities seen in that shard take updates ~100x smaller
than intended: training on the clean batches barely moves the loss.

ORIGIN: None -- the cause is a handful of corrupt batches, not a module.

Fix: rescale / reject the out-of-range confidence rows (targets must lie in
[0, 1]); here the corrupt shard is divided back by 100.  Model, negatives,
optimiser and lr are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Chen et al. 2019 'Embedding Uncertain Knowledge Graphs' (UKGE, logistic "
          "mapping of a DistMult plausibility + MSE on confidence); percentage-vs-probability "
          "column in one data shard; Adam second-moment inflation by a few extreme batches")


class UKGEDistMult(nn.Module):
    def __init__(self, n_ent, n_rel, dim):
        super().__init__()
        self.ent = nn.Embedding(n_ent, dim)
        self.rel = nn.Embedding(n_rel, dim)
        nn.init.normal_(self.ent.weight, std=dim ** -0.25)
        nn.init.normal_(self.rel.weight, std=dim ** -0.25)
        self.head = nn.Linear(1, 1)          # logistic mapping w * s + b

    def forward(self, triples):                 # (B, 3) long: h, r, t
        h = self.ent(triples[:, 0])
        r = self.rel(triples[:, 1])
        t = self.ent(triples[:, 2])
        s = (h * r * t).sum(-1, keepdim=True)
        return torch.sigmoid(self.head(s)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(n_ent=300, n_rel=12, dim=32, bsz=256, lr=0.01, steps=150, bad=(1, 2, 3)),
        dict(n_ent=400, n_rel=20, dim=48, bsz=192, lr=0.01, steps=170, bad=(0, 1)),
        dict(n_ent=250, n_rel=8, dim=24, bsz=320, lr=0.02, steps=130, bad=(2, 3, 4)),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    n_ent, n_rel, dim = cfg["n_ent"], cfg["n_rel"], cfg["dim"]
    # ground-truth uncertain KG generated from a hidden DistMult model
    te = torch.randn(n_ent, dim, generator=g) / dim ** 0.25
    tr = torch.randn(n_rel, dim, generator=g) / dim ** 0.25

    def conf(tri):
        s = (te[tri[:, 0]] * tr[tri[:, 1]] * te[tri[:, 2]]).sum(-1)
        return torch.sigmoid(1.5 * s)

    batches = []
    npos = cfg["bsz"] // 2
    for step in range(cfg["steps"]):
        pos = torch.stack([torch.randint(0, n_ent, (npos,), generator=g),
                           torch.randint(0, n_rel, (npos,), generator=g),
                           torch.randint(0, n_ent, (npos,), generator=g)], 1)
        cpos = conf(pos)
        neg = pos.clone()
        neg[:, 2] = torch.randint(0, n_ent, (npos,), generator=g)
        cneg = torch.zeros(npos)
        if step in cfg["bad"]:
            cpos = cpos * 100.0                 # shard exported as percentages
            if fixed:
                cpos = cpos / 100.0             # fix: back to probabilities
        batches.append((torch.cat([pos, neg]), torch.cat([cpos, cneg])))

    model = UKGEDistMult(n_ent, n_rel, dim)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
