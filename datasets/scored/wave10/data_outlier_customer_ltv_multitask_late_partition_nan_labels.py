"""Customer model with a shared encoder (dense features plus an EmbeddingBag over hashed ids of
recently viewed products) and a dict of heads: {"churn": logit, "ltv": log-lifetime-value}.
LTV is only defined for buyers, so the loss masks it the usual way, `(mask * se).sum() /
mask.sum()`. The feature store normally writes ltv=0 for non-buyers, but one late-arriving
daily partition (a backfill from a different job) leaves the column NULL, which arrives as NaN.
A masked row with NaN is not harmless: 0 * NaN = NaN, so when that partition's batch comes the
loss and every gradient become NaN and Adam writes NaN into all weights; the run never produces a
finite loss again. Fixed: the pipeline fills the NaN labels of the masked rows with 0 before
batching (the one corrupt partition is cleaned); model, loss and optimiser are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Masked multi-task losses with NULL/NaN labels from a feature-store backfill; "
          "PyTorch forum 'loss is nan although I mask the nan targets' (0 * nan = nan)")

N_DENSE, N_BUCKETS, EMB, BAG = 10, 2048, 12, 6


class CustomerModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.viewed = nn.EmbeddingBag(N_BUCKETS, EMB, mode="mean")
        self.encoder = nn.Sequential(nn.Linear(N_DENSE + EMB, 64), nn.GELU(), nn.Linear(64, 32), nn.GELU())
        self.heads = nn.ModuleDict({"churn": nn.Linear(32, 1), "ltv": nn.Linear(32, 1)})

    def forward(self, dense, viewed_ids):
        h = self.encoder(torch.cat([dense, self.viewed(viewed_ids)], -1))
        return {k: v(h).squeeze(-1) for k, v in self.heads.items()}


def loss_fn(out, y):
    churn = F.binary_cross_entropy_with_logits(out["churn"], y["churn"])
    mask = y["is_buyer"]
    se = (out["ltv"] - y["ltv"]) ** 2
    ltv = (mask * se).sum() / mask.sum().clamp_min(1.0)
    return churn + ltv


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CustomerModel()
    w_churn = torch.randn(N_DENSE, generator=g) * 0.8
    w_ltv = torch.randn(N_DENSE, generator=g) * 0.5
    prod_val = torch.randn(N_BUCKETS, generator=g) * 0.5
    steps, bs, bad_step = 150, 64, 95
    batches = []
    for step in range(steps):
        dense = torch.randn(bs, N_DENSE, generator=g)
        viewed = torch.randint(0, N_BUCKETS, (bs, BAG), generator=g)
        churn = (torch.rand(bs, generator=g) < torch.sigmoid(dense @ w_churn)).float()
        is_buyer = (torch.rand(bs, generator=g) < 0.4).float()
        ltv = (dense @ w_ltv + prod_val[viewed].mean(1) + 0.2 * torch.randn(bs, generator=g)) * is_buyer
        if step == bad_step:
            ltv = torch.where(is_buyer > 0, ltv, torch.full_like(ltv, float("nan")))  # NULL from backfill
            if fixed:
                ltv = torch.nan_to_num(ltv, nan=0.0)
        batches.append(((dense, viewed), {"churn": churn, "ltv": ltv, "is_buyer": is_buyer}))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
