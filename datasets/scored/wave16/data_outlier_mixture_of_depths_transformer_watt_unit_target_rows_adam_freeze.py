"""Mixture-of-Depths transformer forecaster frozen by one batch of targets in watts (MW expected).

Mechanism: a small Mixture-of-Depths (MoD) transformer (Raposo et al. 2024: in every block
a linear router scores the tokens, only the top-k (capacity 50%) tokens go through
attention + MLP, the rest skip the block through the residual stream, and the block
output is gated by the router weight) forecasts the next standardised load value of a
substation from its last 24 readings.  Targets are standardised MW.  One early batch
contains rows from a site whose export reported the target in W, i.e. x1e6 (hundreds of
thousands of standard deviations).  That single step has an MSE ~1e11 times larger than
normal; Adam's first moment pushes the head towards those huge targets for a
few dozen steps and, worse, the second-moment estimate v absorbs the squared outlier
gradient.  With beta2 = 0.999 it decays only ~14% over the rest of the run, so afterwards
every parameter moves ~sqrt(v_normal / v) ~ 1e-4 of its normal step: the forecaster
stays at (or above) its early loss for the rest of the run.

ORIGIN: None.  The model is fine; one batch of the data is corrupt.

Fix: filter the batch: drop the rows whose target is outside the physically plausible
range (|z| > 20); every other batch is unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Mixture-of-Depths (Raposo et al. 2024) token routing; widely reported Adam 'training freezes "
          "after one bad batch' (second-moment blow-up) from mixed-unit targets in a load data set")


class MoDBlock(nn.Module):
    def __init__(self, d, heads, capacity):
        super().__init__()
        self.capacity = capacity
        self.router = nn.Linear(d, 1)
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        b, L, d = x.shape
        k = max(1, int(self.capacity * L))
        r = self.router(x).squeeze(-1)                       # (b, L)
        top = r.topk(k, dim=1).indices.sort(dim=1).values     # keep temporal order
        idx = top.unsqueeze(-1).expand(-1, -1, d)
        xs = x.gather(1, idx)
        h = self.ln1(xs)
        h = xs + self.attn(h, h, h, need_weights=False)[0]
        h = h + self.mlp(self.ln2(h))
        gate = torch.sigmoid(r.gather(1, top)).unsqueeze(-1)
        upd = xs + gate * (h - xs)
        return x.scatter(1, idx, upd)


class MoDForecaster(nn.Module):
    def __init__(self, d_in, d, depth, heads, L, capacity):
        super().__init__()
        self.embed = nn.Linear(d_in, d)
        self.pos = nn.Parameter(torch.randn(1, L, d) * 0.02)
        self.blocks = nn.ModuleList([MoDBlock(d, heads, capacity) for _ in range(depth)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        h = self.embed(x) + self.pos
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.ln(h[:, -1])).squeeze(-1)


def make_batch(bs, L, g):
    t = torch.arange(L + 1).float()
    amp = 0.5 + torch.rand(bs, 1, generator=g)
    per = 6 + 6 * torch.rand(bs, 1, generator=g)
    ph = 2 * math.pi * torch.rand(bs, 1, generator=g)
    lvl = 0.5 * torch.randn(bs, 1, generator=g)
    s = lvl + amp * torch.sin(2 * math.pi * t / per + ph) + 0.1 * torch.randn(bs, L + 1, generator=g)
    hour = torch.sin(2 * math.pi * t[:L] / 24).expand(bs, L)
    feats = torch.stack([s[:, :L], s[:, :L] - s[:, :L].mean(1, keepdim=True), hour, torch.ones(bs, L) * lvl], -1)
    return feats, s[:, L]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, depth=3, L=24, bs=32, lr=2e-3, steps=150, bad=3),
           dict(d=48, depth=2, L=20, bs=48, lr=1.5e-3, steps=130, bad=5),
           dict(d=32, depth=4, L=24, bs=24, lr=3e-3, steps=160, bad=4)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    batches = []
    for step in range(cfg["steps"]):
        x, y = make_batch(cfg["bs"], cfg["L"], g)
        if step == cfg["bad"]:
            rows = torch.arange(cfg["bs"]) % 2 == 0          # one site's rows exported in W
            y = torch.where(rows, y * 1.0e6, y)
            if fixed:
                keep = y.abs() < 20
                x, y = x[keep], y[keep]
        batches.append((x, y))
    model = MoDForecaster(4, cfg["d"], cfg["depth"], 4, cfg["L"], 0.5)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=cfg["steps"])
