"""GRU long-only portfolio allocator trained end-to-end on a negative Sharpe-ratio loss (Zhang,
Zohren & Roberts 2020, "Deep learning for portfolio optimisation").

Mechanism: the loss is -mean(r_p) / std(r_p) over the batch of portfolio returns. Training is
calm until one batch is a market-closure window whose prices were forward-filled by the data
vendor (every asset return, and so every portfolio return, is exactly 0). std() of a constant
vector is 0: the forward value is 0/0 = NaN and the backward of the sqrt inside std is 0/0 as
well, so the loss and all gradients become non-finite in one step. The data is legitimate (no
trading, no return); the unsafe op is the un-guarded division by a standard deviation that can
be zero.

ORIGIN: None -- the 0/0 is in the loss function, outside every module; the NaN enters the model
through the gradient of the softmax head.

Fix (fixed=True): the usual epsilon guard, -mean / sqrt(var + eps); a zero-variance batch then
gives loss 0 and zero gradients instead of NaN. Nothing else changes.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Sharpe-ratio loss without epsilon in deep portfolio optimisation code; NaN loss on "
          "stale forward-filled (holiday / halt) price windows, as reported in many "
          "'Sharpe loss becomes nan' forum threads")


class GRUAllocator(nn.Module):
    def __init__(self, n_assets, hidden):
        super().__init__()
        self.gru = nn.GRU(n_assets, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_assets)

    def forward(self, x):
        h, _ = self.gru(x)
        return torch.softmax(self.head(h[:, -1]), dim=-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n_assets = [6, 8, 5][seed % 3]
    hidden = [24, 32, 16][seed % 3]
    lookback = [10, 8, 12][seed % 3]
    batch = [64, 48, 80][seed % 3]
    steps = 150
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bad_step = [70, 90, 55][seed % 3]

    # AR(1) daily returns with asset-specific momentum: a learnable allocation signal
    phi = rng.uniform(0.3, 0.6, size=n_assets)
    drift = rng.normal(0.0, 2e-4, size=n_assets)
    vol = rng.uniform(0.008, 0.02, size=n_assets)

    def window(b):
        r = np.zeros((b, lookback + 1, n_assets))
        r[:, 0] = rng.normal(0, 1, (b, n_assets)) * vol
        for t in range(1, lookback + 1):
            r[:, t] = drift + phi * r[:, t - 1] + rng.normal(0, 1, (b, n_assets)) * vol
        x = torch.tensor(r[:, :-1] / vol, dtype=torch.float32)   # vol-normalised features
        y = torch.tensor(r[:, -1] * 100.0, dtype=torch.float32)    # next-day return in %
        return x, y

    batches = []
    for s in range(steps):
        x, y = window(batch)
        if s == bad_step:
            # exchange closed: vendor forward-fills prices, every return is exactly zero
            x = torch.zeros_like(x)
            y = torch.zeros_like(y)
        batches.append((x, y))

    model = GRUAllocator(n_assets, hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(w, y):
        rp = (w * y).sum(dim=1)
        if fixed:
            return -rp.mean() / torch.sqrt(rp.var() + 1e-8)
        return -rp.mean() / rp.std()

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
