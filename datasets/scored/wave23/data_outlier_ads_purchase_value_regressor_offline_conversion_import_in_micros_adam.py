"""Ads value-based bidding - purchase-value (pLTV-style) regressor: campaign,
advertiser and placement embeddings + dense context -> SiLU MLP -> predicted
order value (z-scored with historical statistics), MSE, Adam.  One of the
first batches comes from an offline-conversion import whose values were
uploaded in micros.

Mechanism: ads APIs carry money as micros (1 USD = 1,000,000 micros).  A
chunk of one advertiser's offline-conversion upload (at step 1-3, depending
on the seed) sent ``conversion_value`` in micros, so ~60% of that batch has
z-scored targets around 1e6 instead of O(1).  The MSE error - and therefore
every parameter's gradient, since the error back-propagates through the
whole (smooth-activation) network - is ~1e6 times its normal size for that
one step.  Adam makes a bounded step, but its second-moment estimate v is now
~1e10 times the normal g^2 and decays only with beta2 = 0.999 (thousands of
steps), so every later update is ~1e-5 of its normal size: training freezes
at (or, after the momentum drift towards the huge targets, above) its
initial loss for the rest of the run - a stall with no non-finite value.

ORIGIN: None - the fault is in the targets of one batch; every parameter
receives the giant gradient at once and no single layer is where it starts.

Fix: filter the batch at ingestion - rows whose value exceeds a plausibility
cap (1000 standard deviations) are dropped and replaced by clean rows of the
same batch; model, optimiser and all other batches are unchanged.
"""
import random

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Google Ads / DV360 offline conversion imports where conversion_value is sent in micros "
          "instead of currency units (micros convention of the Ads APIs); Adam second-moment blow-up "
          "after a single huge-gradient batch freezing training (pytorch forum 'loss stuck after one "
          "bad batch with Adam')")

N_CAMP, N_ADV, N_PLC, N_DENSE = 24, 8, 6, 10
V_MEAN, V_STD = 2.4, 1.5   # historical order-value statistics (hundreds of USD)


class ValueNet(nn.Module):
    def __init__(self, dim, width, depth):
        super().__init__()
        self.camp = nn.Embedding(N_CAMP, dim)
        self.adv = nn.Embedding(N_ADV, dim)
        self.plc = nn.Embedding(N_PLC, dim)
        layers, d = [], 3 * dim + N_DENSE
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SiLU()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, cat, dense):
        h = torch.cat([self.camp(cat[:, 0]), self.adv(cat[:, 1]), self.plc(cat[:, 2]), dense], 1)
        return self.mlp(h).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    dim = r.choice([8, 12, 16])
    width = r.choice([64, 128])
    depth = r.choice([2, 3])
    lr = r.choice([2e-3, 3e-3])
    bs = r.choice([128, 256])
    steps = r.choice([120, 150, 200])
    bad_step = r.choice([1, 2, 3])

    g = torch.Generator().manual_seed(5000 + seed)
    camp_v = torch.randn(N_CAMP, generator=g) * 0.3
    adv_v = torch.randn(N_ADV, generator=g) * 0.3
    plc_v = torch.randn(N_PLC, generator=g) * 0.2
    w_dense = torch.randn(N_DENSE, generator=g) * 0.1
    batches = []
    for t in range(steps):
        cat = torch.stack([torch.randint(0, N_CAMP, (bs,), generator=g),
                           torch.randint(0, N_ADV, (bs,), generator=g),
                           torch.randint(0, N_PLC, (bs,), generator=g)], 1)
        dense = torch.randn(bs, N_DENSE, generator=g)
        logv = (camp_v[cat[:, 0]] + adv_v[cat[:, 1]] + plc_v[cat[:, 2]] + dense @ w_dense
                + 0.3 * torch.tanh(dense[:, 0] * dense[:, 1]))
        value = torch.exp(logv + 0.15 * torch.randn(bs, generator=g)) * 2.0   # hundreds of USD
        if t == bad_step:
            rows = torch.rand(bs, generator=g) < 0.6      # a chunk of one upload, in micros
            value[rows] = value[rows] * 1e6
            if fixed:
                keep = torch.nonzero(value < 1e3 * V_STD).squeeze(1)
                idx = keep[torch.randint(0, len(keep), (bs,), generator=g)]
                cat, dense, value = cat[idx], dense[idx], value[idx]
        batches.append(((cat, dense), (value - V_MEAN) / V_STD))   # z-scored with historical stats

    torch.manual_seed(seed)
    model = ValueNet(dim, width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
