"""Off-policy CTR model trained from logged bandit feedback: each logged impression carries the
logging policy's propensity, and the pointwise BCE of every row is weighted by 1/propensity
(inverse propensity scoring) so the model estimates clicks under uniform exposure. The
propensities in a healthy log lie in [0.2, 1] (weights 1..5). One ingestion shard, however,
comes from a logger that wrote propensity 0.0 for impressions served by a hard-coded override,
and the feature pipeline's `clamp_min(1e-9)` guard turns them into weights of 1e9. When that
single batch arrives mid-run its gradient is ~1e8 times a normal one; SGD with momentum throws
the embedding tables and ReLU tower far away and the run never recovers (the loss becomes
enormous or non-finite). Fixed: the pipeline drops the corrupt rows (propensity below 1e-3)
before batching; everything else, including the IPS weighting, is unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Inverse-propensity-scored learning from logged bandit feedback (Joachims/Swaminathan, "
          "'Counterfactual learning to rank'); known failure: zero / missing propensities in the log "
          "blow up IPS weights, motivating weight clipping or filtering")

N_BUCKETS, EMB, N_DENSE = 1000, 8, 8


def hash_bucket(ids, salt):
    return (ids * 2654435761 + salt * 97) % N_BUCKETS


class CTRTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_emb = nn.Embedding(N_BUCKETS, EMB)
        self.ad_emb = nn.Embedding(N_BUCKETS, EMB)
        self.mlp = nn.Sequential(nn.Linear(2 * EMB + N_DENSE, 48), nn.ReLU(),
                                 nn.Linear(48, 24), nn.ReLU(), nn.Linear(24, 1))

    def forward(self, user_raw, ad_raw, dense):
        u = self.user_emb(hash_bucket(user_raw, 1))
        a = self.ad_emb(hash_bucket(ad_raw, 2))
        return self.mlp(torch.cat([u, a, dense], -1)).squeeze(-1)


def loss_fn(logits, y):
    click, ips_w = y
    per_row = F.binary_cross_entropy_with_logits(logits, click, reduction="none")
    return (ips_w * per_row).sum() / ips_w.numel()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CTRTower()
    n_users, n_ads = 300, 60
    u_fac = torch.randn(n_users, generator=g)
    a_fac = torch.randn(n_ads, generator=g)
    w_dense = torch.randn(N_DENSE, generator=g) * 1.0
    steps, bs, bad_step = 160, 128, 70
    batches = []
    for step in range(steps):
        user = torch.randint(0, n_users, (bs,), generator=g)
        ad = torch.randint(0, n_ads, (bs,), generator=g)
        dense = torch.randn(bs, N_DENSE, generator=g)
        logit = 1.5 * u_fac[user] * a_fac[ad] + dense @ w_dense
        click = (torch.rand(bs, generator=g) < torch.sigmoid(logit)).float()
        prop = 0.2 + 0.8 * torch.rand(bs, generator=g)
        if step == bad_step:
            prop[:3] = 0.0                      # override-served impressions logged with propensity 0
        prop = prop.clamp_min(1e-9)             # pipeline "guard"
        ips_w = 1.0 / prop
        if fixed:
            keep = prop >= 1e-3                 # drop the corrupt rows
            user, ad, dense, click, ips_w = user[keep], ad[keep], dense[keep], click[keep], ips_w[keep]
        batches.append(((user, ad, dense), (click, ips_w)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
