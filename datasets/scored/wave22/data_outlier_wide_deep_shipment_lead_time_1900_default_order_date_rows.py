"""Wide & Deep shipment lead-time regressor for a supply-chain control tower: carrier, lane and
destination-port embeddings plus dense features (standardised distance, weight, month
seasonality) feed a deep MLP, and a wide linear part over the dense features is added; the
target is the standardised door-to-door lead time (days), trained with SGD+momentum on MSE.

Mechanism: in one weekly ERP extract a few purchase orders were migrated without an order date,
which the ETL filled with the system default 1900-01-01; their lead time "delivery date - order
date" is ~45,000 days, i.e. thousands of standard deviations. That single batch produces a
gradient ~1e3-1e4x the normal one; the SGD+momentum step throws the embeddings and dense weights
far away, and the loss never comes back (it overflows to inf/NaN or sits orders of magnitude
above its start). All other batches are clean.

ORIGIN: None -- the corruption is in the targets of one batch; no module is at fault, the huge
error enters through the loss at the output.

Fix (fixed=True): the usual sanity filter -- rows with an impossible lead time (outside 0..365
days) are dropped from the batch before the loss. Same model, optimiser, lr, data.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("ERP default-date (1900-01-01 / 1970-01-01) rows producing absurd lead times in "
          "supply-chain ETA models; gradient blow-up from a single corrupted batch")


class WideDeep(nn.Module):
    def __init__(self, n_carrier, n_lane, n_port, n_dense, emb, hidden):
        super().__init__()
        self.carrier = nn.Embedding(n_carrier, emb)
        self.lane = nn.Embedding(n_lane, emb)
        self.port = nn.Embedding(n_port, emb)
        self.deep = nn.Sequential(nn.Linear(3 * emb + n_dense, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.wide = nn.Linear(n_dense, 1)

    def forward(self, cat, dense):
        e = torch.cat([self.carrier(cat[:, 0]), self.lane(cat[:, 1]), self.port(cat[:, 2]), dense], 1)
        return (self.deep(e) + self.wide(dense)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n_carrier, n_lane, n_port = 12, 40, 10
    emb = [8, 6, 10][seed % 3]
    hidden = [64, 48, 32][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = [0.01, 0.015, 0.008][seed % 3]
    bad_step = [90, 120, 70][seed % 3]
    steps = 180
    c_eff = rng.normal(0, 3, n_carrier)
    l_eff = rng.normal(0, 5, n_lane)
    p_eff = rng.normal(0, 2, n_port)
    mu_lt, sd_lt = 21.0, 7.0

    def sample(b):
        cat = np.stack([rng.integers(0, n_carrier, b), rng.integers(0, n_lane, b),
                        rng.integers(0, n_port, b)], 1)
        month = rng.integers(0, 12, b)
        dense = np.stack([rng.normal(size=b), rng.normal(size=b),
                          np.sin(2 * np.pi * month / 12), np.cos(2 * np.pi * month / 12)], 1)
        lt = (mu_lt + c_eff[cat[:, 0]] + l_eff[cat[:, 1]] + p_eff[cat[:, 2]] + 3.0 * dense[:, 0]
              + 2.0 * dense[:, 2] + 1.5 * rng.normal(size=b))
        return cat, dense, np.maximum(lt, 2.0)

    batches = []
    for s in range(steps):
        cat, dense, lt = sample(batch)
        if s == bad_step:
            rows = rng.choice(batch, size=3, replace=False)
            lt[rows] = rng.uniform(44000, 45500, size=3)          # delivered 2023 - ordered 1900-01-01
        keep = (lt >= 0) & (lt <= 365) if fixed else np.ones(batch, bool)
        y = (lt[keep] - mu_lt) / sd_lt
        batches.append(((torch.tensor(cat[keep], dtype=torch.long),
                         torch.tensor(dense[keep], dtype=torch.float32)),
                        torch.tensor(y, dtype=torch.float32)))

    model = WideDeep(n_carrier, n_lane, n_port, 4, emb, hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
