"""Retail demand quantile model: sparse SKU and store embeddings (nn.Embedding(sparse=True)) plus
calendar/price features into an MLP that outputs the P50 and P90 of standardised log1p weekly units,
trained with the pinball loss and Adagrad (which accepts sparse gradients).

Why it looks alarming but is healthy: the embedding gradients are torch sparse tensors that touch
only the few hundred SKU rows present in the batch -- thousands of rows get no update at all on any
given step, and a rare SKU's row can stay untouched for dozens of steps. The pinball loss has
piecewise-constant gradients (exactly -tau or 1 - tau per sample), so many dense parameter gradients look
'quantised', and the loss is an asymmetric sum over two quantiles whose scale is not that of an MSE.
None of this is a failure: every row is updated whenever its SKU appears, Adagrad's per-row
accumulators handle the sparsity, and the quantile loss falls steadily.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch docs: nn.Embedding(sparse=True) is supported by optim.SGD, optim.SparseAdam and "
          "optim.Adagrad; quantile (pinball) loss as in MQ-RNN / Amazon demand forecasting "
          "(Wen et al. 2017)")

TAUS = (0.5, 0.9)


class QuantileDemandNet(nn.Module):
    def __init__(self, n_sku, n_store, h, depth):
        super().__init__()
        self.sku = nn.Embedding(n_sku, 16, sparse=True)
        self.store = nn.Embedding(n_store, 8, sparse=True)
        layers, d = [], 16 + 8 + 4
        for _ in range(depth):
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        self.mlp = nn.Sequential(*layers, nn.Linear(d, len(TAUS)))

    def forward(self, sku, store, feats):
        return self.mlp(torch.cat([self.sku(sku), self.store(store), feats], 1))


def pinball(q, y):
    losses = []
    for i, tau in enumerate(TAUS):
        e = y - q[:, i]
        losses.append(torch.maximum(tau * e, (tau - 1) * e).mean())
    return sum(losses)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_sku = [2000, 3000, 1500][seed % 3]
    n_store = 40
    h = [64, 128, 96][seed % 3]
    depth = [2, 2, 3][seed % 3]
    bs = [256, 192, 320][seed % 3]
    lr = [0.05, 0.04, 0.06][seed % 3]
    steps = 200
    base = torch.randn(n_sku, generator=g) * 1.0 + 1.0            # SKU log level
    elast = torch.rand(n_sku, generator=g) * 2 + 0.5              # price elasticity
    store_eff = torch.randn(n_store, generator=g) * 0.4
    weights = torch.exp(torch.randn(n_sku, generator=g) * 1.2)   # sampling frequency (long tail)
    raw = []
    for _ in range(steps):
        sku = torch.multinomial(weights, bs, replacement=True, generator=g)
        store = torch.randint(0, n_store, (bs,), generator=g)
        disc = torch.rand(bs, generator=g) * 0.4 * (torch.rand(bs, generator=g) < 0.3).float()
        week = torch.randint(0, 52, (bs,), generator=g).float()
        rate = torch.exp(base[sku] + store_eff[store] + elast[sku] * disc + 0.3 * torch.sin(6.283 * week / 52))
        units = torch.poisson(rate, generator=g)
        feats = torch.stack([disc / 0.4, torch.sin(6.283 * week / 52), torch.cos(6.283 * week / 52),
                             (disc > 0).float()], 1)
        raw.append(((sku, store, feats), torch.log1p(units)))
    ys = torch.cat([r[1] for r in raw])
    mu, sd = ys.mean(), ys.std()
    batches = [(x, (y - mu) / sd) for x, y in raw]
    torch.manual_seed(seed)
    model = QuantileDemandNet(n_sku, n_store, h, depth)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=pinball, batches=batches, steps=steps)
