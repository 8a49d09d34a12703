"""VQA counting baseline ("how many <category> are there?"): each detected region's feature is fused
with the question embedding, a small MLP scores the region, and the answer is the *sum over regions
of ReLU(region score)* -- a soft count that is non-negative by construction.  Smooth-L1 against the
ground-truth count; Adam with lr 1e-2 - 2e-2 (a "small head, larger lr" choice).

Mechanism: the scorer's last Linear acts on non-negative ReLU features, so at init its output has
a shared offset (w . E[h] + b) that puts the score of most regions on the same side of zero -- in
these runs below zero for 85-99% of all regions.  Only the few positive-score regions carry any
gradient, and Adam at lr 1e-2 - 2e-2 turns even those tiny gradients into full-size steps on every
weight of the shared region representation, moving the scores by more than their spread.  Within
~5 steps no region of any image has a positive score: the predicted count is exactly 0, the ReLU
passes exactly zero gradient to the scorer and everything below it, and the loss sits at the
"always answer 0" level for the rest of the run.  Nothing is ever non-finite.

ORIGIN: "region_act" -- the ReLU on the region scores, where every unit is dead and the gradient
stops (the scorer feeding it is "scorer").

Fix: LeakyReLU(0.05) on the region scores, so a region pushed negative still passes a gradient (Adam
rescales it) and the count recovers; same model, data, loss, lr and optimiser.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "region_act"
SOURCE = ("Zhang et al. 2018 'Learning to Count Objects in Natural Images for VQA' (soft-count "
          "baselines summing per-region attention); Trott et al. 2018 'Interpretable Counting for "
          "VQA'; CS231n notes on dying ReLUs ('as much as 40% of the network can be dead' with a high lr)")


class SoftCounter(nn.Module):
    def __init__(self, d_reg, n_cat, h, fixed):
        super().__init__()
        self.q_emb = nn.Embedding(n_cat, h)
        self.v_proj = nn.Linear(d_reg, h)
        self.scorer = nn.Sequential(nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))
        self.region_act = nn.LeakyReLU(0.05) if fixed else nn.ReLU()

    def forward(self, regions, q):
        f = self.v_proj(regions) * torch.sigmoid(self.q_emb(q))[:, None, :]
        s = self.scorer(f).squeeze(-1)                  # (B, R) region scores
        return self.region_act(s).sum(1)                # soft count


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [64, 96, 128][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = [0.01, 0.015, 0.02][seed % 3]
    n_cat, R, d_reg, steps = 5, 36, 24, 200
    cat_vec = torch.randn(n_cat, d_reg, generator=g)
    batches = []
    for _ in range(steps):
        cats = torch.randint(0, n_cat, (bs, R), generator=g)
        is_obj = torch.rand(bs, R, generator=g) < 0.2          # the rest are background boxes
        regions = torch.where(is_obj[..., None], cat_vec[cats], torch.zeros(d_reg)) \
            + 0.4 * torch.randn(bs, R, d_reg, generator=g)
        q = torch.randint(0, n_cat, (bs,), generator=g)
        y = ((cats == q[:, None]) & is_obj).sum(1).float()
        batches.append(((regions, q), y))
    torch.manual_seed(seed)
    model = SoftCounter(d_reg, n_cat, h, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.SmoothL1Loss(), batches=batches, steps=steps)
