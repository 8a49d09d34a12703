"""Healthy: probabilistic demand model for promo planning. SKU and store embeddings +
log-price ratio, promo depth, display flag and week-of-year features -> MLP with two heads:
mean and log-variance of log(units). Loss: hand-written heteroscedastic Gaussian negative
log-likelihood, SUMMED over the batch (the team's convention so that per-row weights can be
added later); Adam.

Why a naive monitor might flag it: the loss is a sum over 128-256 rows, so it starts in the
hundreds, and once the predicted variances shrink below 1 the NLL per row is negative: the
loss crosses zero and ends clearly negative (about -30 to -150). About one batch in twelve is a
"promo-event week" (deep discounts across whole categories, much noisier demand); on those
batches the summed loss jumps up by hundreds and recovers on the next ordinary batch. The
model is learning throughout -- mean error and calibrated variances both improve.

ORIGIN: None (healthy run).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Heteroscedastic Gaussian NLL regression (Nix & Weigend 1994; Kendall & Gal 2017; "
          "DeepAR-style probabilistic demand forecasting); negative log-likelihood values and "
          "summed reductions in promo-demand models")


class PromoDemandNet(nn.Module):
    def __init__(self, n_sku, n_store, emb, hid):
        super().__init__()
        self.sku = nn.Embedding(n_sku, emb)
        self.store = nn.Embedding(n_store, emb)
        self.body = nn.Sequential(nn.Linear(2 * emb + 5, hid), nn.ReLU(), nn.Linear(hid, hid),
                                  nn.ReLU())
        self.mean = nn.Linear(hid, 1)
        self.logvar = nn.Linear(hid, 1)

    def forward(self, sku, store, num):
        h = self.body(torch.cat([self.sku(sku), self.store(store), num], 1))
        return torch.cat([self.mean(h), self.logvar(h)], 1)


def gaussian_nll_sum(out, y):
    mu, logvar = out[:, 0], out[:, 1]
    return 0.5 * (logvar + (y - mu) ** 2 / logvar.exp() + math.log(2 * math.pi)).sum()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_sku, n_store, steps = 80, 12, 220
    emb = [8, 12, 16][seed % 3]
    hid = [64, 96, 128][seed % 3]
    bs = [128, 256, 192][seed % 3]
    lr = [5e-3, 4e-3, 6e-3][seed % 3]
    torch.manual_seed(seed)
    model = PromoDemandNet(n_sku, n_store, emb, hid)
    base = 1.5 + 0.8 * torch.randn(n_sku, generator=g)
    elast = -(1.0 + 2.0 * torch.rand(n_sku, generator=g))
    store_eff = 0.3 * torch.randn(n_store, generator=g)
    batches = []
    for t in range(steps):
        event = (t % 12 == (seed * 5) % 12) and t > 10
        sku = torch.randint(0, n_sku, (bs,), generator=g)
        store = torch.randint(0, n_store, (bs,), generator=g)
        depth = (0.3 + 0.3 * torch.rand(bs, generator=g)) if event else \
            torch.where(torch.rand(bs, generator=g) < 0.15, 0.1 + 0.2 * torch.rand(bs, generator=g),
                        torch.zeros(bs))
        lrp = torch.log1p(-depth)
        disp = (torch.rand(bs, generator=g) < (0.8 if event else 0.1)).float()
        wk = 2 * math.pi * torch.rand(bs, generator=g)
        num = torch.stack([lrp * 5, depth * 3, disp, torch.sin(wk), torch.cos(wk)], 1)
        noise_sd = 0.08 + 0.6 * depth + (0.5 if event else 0.0)
        y = (base[sku] + store_eff[store] + elast[sku] * lrp + 0.4 * disp + 0.3 * torch.sin(wk)
             + noise_sd * torch.randn(bs, generator=g))
        batches.append(((sku, store, num), y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=gaussian_nll_sum, batches=batches,
                steps=steps)
