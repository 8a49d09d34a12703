"""Price-elasticity / demand model for a retailer's SKUs: log(units) = a_sku +
b_sku * log(price / reference price) + MLP(context), where a_sku (baseline demand) and b_sku
(own-price elasticity) are per-SKU embeddings and the context MLP sees promo flag, display,
week-of-year (sin/cos), holiday flag and a competitor price index. MSE on log units, plain SGD
with momentum.

Mechanism: the learning rate (0.8-1.2) was copied from the team's sparse-embedding recipe
(per-SKU embeddings each see a few rows per batch, so they were tuned with a large SGD lr).
Applied to the whole model, including the dense context MLP whose weights receive a gradient
from every row, the step is far beyond 2 / (largest curvature): the shared MLP weights
overshoot, each step multiplies the error instead of reducing it, and within a few
steps the loss grows geometrically to inf / NaN (typically within 5-10 steps).

ORIGIN: None -- an over-large step size hits every parameter; no single module is where the
divergence starts (the dense MLP merely diverges first).

Fix: lr = 0.1 for the same SGD-momentum optimiser; same model, data, steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Log-log demand models with per-SKU elasticity embeddings (e.g. Dominick's / "
          "M5-style price-elasticity work); divergence of SGD when lr exceeds 2/L, a single lr "
          "reused from a sparse-embedding recipe for dense layers (Goodfellow et al. ch. 8)")


class ElasticityNet(nn.Module):
    def __init__(self, n_sku, d_ctx, hid, depth):
        super().__init__()
        self.base = nn.Embedding(n_sku, 1)
        self.elast = nn.Embedding(n_sku, 1)
        nn.init.zeros_(self.base.weight)
        nn.init.constant_(self.elast.weight, -1.0)
        layers, f = [], d_ctx
        for _ in range(depth):
            layers += [nn.Linear(f, hid), nn.ReLU()]
            f = hid
        layers.append(nn.Linear(f, 1))
        self.ctx = nn.Sequential(*layers)

    def forward(self, sku, log_rel_price, ctx):
        return (self.base(sku).squeeze(-1) + self.elast(sku).squeeze(-1) * log_rel_price
                + self.ctx(ctx).squeeze(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_sku, d_ctx, steps = 300, 6, 150
    hid = [64, 96, 128][seed % 3]
    depth = 2 + seed % 2
    bs = [128, 256, 192][seed % 3]
    lr = 0.1 if fixed else [0.8, 1.0, 1.2][seed % 3]
    torch.manual_seed(seed)
    model = ElasticityNet(n_sku, d_ctx, hid, depth)
    a_true = 2.0 + 0.8 * torch.randn(n_sku, generator=g)
    b_true = -(0.5 + 2.5 * torch.rand(n_sku, generator=g))
    batches = []
    for _ in range(steps):
        sku = torch.randint(0, n_sku, (bs,), generator=g)
        promo = (torch.rand(bs, generator=g) < 0.2).float()
        lrp = -0.25 * promo + 0.08 * torch.randn(bs, generator=g)
        week = torch.rand(bs, generator=g) * 2 * math.pi
        hol = (torch.rand(bs, generator=g) < 0.08).float()
        disp = (torch.rand(bs, generator=g) < 0.15).float()
        comp = 0.1 * torch.randn(bs, generator=g)
        ctx = torch.stack([promo, disp, torch.sin(week), torch.cos(week), hol, comp / 0.1], 1)
        logq = (a_true[sku] + b_true[sku] * lrp + 0.4 * promo + 0.3 * disp
                + 0.3 * torch.sin(week) + 0.5 * hol + 0.8 * comp
                + 0.2 * torch.randn(bs, generator=g))
        batches.append(((sku, lrp, ctx), logq))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
