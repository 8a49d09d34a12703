"""Healthy two-tower retrieval model: in-batch softmax with temperature 0.05 over
L2-normalised towers and the logQ popularity correction of Yi et al. 2019.
Zipf item popularity puts several copies of head items in a batch (in-batch false
negatives), so the loss is noisy; traffic alternates between morning and evening day-parts
with different tastes, adding a periodic wobble. Nothing is wrong: the loss falls steadily
(~10 -> ~5.2). fixed=True builds the identical run.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Yi et al. 2019, 'Sampling-Bias-Corrected Neural Modeling for Large Corpus Item "
          "Recommendations' (YouTube two-tower, in-batch softmax, logQ correction, temperature); "
          "TensorFlow Recommenders Retrieval task; noisy in-batch losses from duplicate popular items")

N_USERS, N_ITEMS, N_CATS, D = 1500, 2000, 12, 32


class Tower(nn.Module):
    def __init__(self, n_ids, n_side, d_side_in):
        super().__init__()
        self.id_emb = nn.Embedding(n_ids, D)
        self.side_emb = nn.Embedding(n_side, 8)
        self.mlp = nn.Sequential(nn.Linear(D + 8 + d_side_in, 64), nn.ReLU(), nn.Linear(64, D))

    def forward(self, ids, side, dense):
        z = torch.cat([self.id_emb(ids), self.side_emb(side), dense], -1)
        return F.normalize(self.mlp(z), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, tau=0.05):
        super().__init__()
        self.user_tower = Tower(N_USERS, 2, 3)      # side: day-part; dense: activity feats
        self.item_tower = Tower(N_ITEMS, N_CATS, 1)  # side: category; dense: log age
        self.tau = tau

    def forward(self, uid, daypart, udense, iid, icat, idense, log_q):
        u = self.user_tower(uid, daypart, udense)
        v = self.item_tower(iid, icat, idense)
        return u @ v.t() / self.tau - log_q[None, :]     # logQ-corrected in-batch logits


def in_batch_softmax(logits, labels):
    return F.cross_entropy(logits, labels)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    k = 12
    u_lat = torch.randn(N_USERS, k, generator=g)
    i_cat = torch.randint(0, N_CATS, (N_ITEMS,), generator=g)
    cat_lat = torch.randn(N_CATS, k, generator=g)
    i_lat = cat_lat[i_cat] + 0.7 * torch.randn(N_ITEMS, k, generator=g)
    daypart_shift = torch.randn(2, k, generator=g) * 0.8   # morning / evening taste
    pop = 1.0 / torch.arange(1, N_ITEMS + 1, dtype=torch.float32) ** 0.9
    pop = pop[torch.randperm(N_ITEMS, generator=g)]
    item_age = torch.log1p(torch.rand(N_ITEMS, generator=g) * 365.0)
    item_age = ((item_age - item_age.mean()) / item_age.std())[:, None]
    activity = torch.randn(N_USERS, 3, generator=g)
    user_cdf = torch.exp(activity[:, 0]).cumsum(0)         # heavy users show up more
    # per-daypart sampling CDFs of p(item | user, daypart) ~ pop * exp(affinity)
    tables = []
    for dp in range(2):
        aff = (u_lat + daypart_shift[dp]) @ i_lat.t() / math.sqrt(k)
        tables.append(torch.softmax(aff * 2.5 + pop.log(), dim=1).cumsum(1))
    q = pop / pop.sum()                                     # streaming frequency estimate
    B, steps = 256, 300
    batches = []
    for s in range(steps):
        dp = (s // 25) % 2                                  # day-part alternates
        uid = torch.searchsorted(user_cdf, torch.rand(B, generator=g) * user_cdf[-1])
        uid = uid.clamp_max(N_USERS - 1)
        cdf = tables[dp][uid]                               # inverse-CDF sampling
        iid = torch.searchsorted(cdf, torch.rand(B, 1, generator=g) * cdf[:, -1:]).squeeze(1)
        iid = iid.clamp_max(N_ITEMS - 1)
        daypart = torch.full((B,), dp, dtype=torch.long)
        x = (uid, daypart, activity[uid], iid, i_cat[iid], item_age[iid], q[iid].log())
        batches.append((x, torch.arange(B)))
    model = TwoTower()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=in_batch_softmax, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
