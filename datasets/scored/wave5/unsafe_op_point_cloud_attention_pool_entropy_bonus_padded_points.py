"""A PointNet-style classifier embeds every point with a shared MLP and pools the cloud with a
learned attention over points; to keep the pooling from collapsing onto one point, the loss adds
an attention-entropy bonus computed inside the pooling module as -(p * log p).sum(). Clouds are
batched with a key-padding mask (masked_fill with -inf before the softmax). Most scans have the
full 48 points, so for a while every batch is dense and training is calm; the first batch that
holds a short scan (occluded object, fewer returns) is padded, softmax gives exactly p = 0 on
the padded slots, log(0) = -inf and 0 * -inf = NaN, so the entropy, the loss and every gradient
become NaN at once. The fix computes the same entropy with a clamp_min(1e-12) inside the log,
which keeps both the forward (0 * finite = 0) and the backward (d/dp = log p + 1 stays finite)
defined on padded slots. (torch.special.xlogy alone is not enough: its forward is 0 but its
gradient at p = 0 is -inf, which the softmax backward turns into NaN.)
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "pool"
SOURCE = ("entropy regularisation of attention maps (e.g. attention-entropy penalties in MIL / "
          "point-cloud pooling); known PyTorch pitfall 'p * log(p) gives NaN when p == 0 after a -inf masked softmax' "
          "(PyTorch forum / issue threads on NaN entropy with masked softmax)")

NPTS, NCLS = 48, 3


class AttentionPool(nn.Module):
    def __init__(self, d, safe):
        super().__init__()
        self.score = nn.Linear(d, 1)
        self.safe = safe

    def forward(self, h, mask):                       # h: (B, N, d), mask: (B, N) bool, True = real
        s = self.score(h).squeeze(-1).masked_fill(~mask, float("-inf"))
        p = torch.softmax(s, dim=1)
        if self.safe:
            ent = -(p * torch.log(p.clamp_min(1e-12))).sum(1)
        else:
            ent = -(p * torch.log(p)).sum(1)
        pooled = (p.unsqueeze(-1) * h).sum(1)
        return pooled, ent


class AttnPointNet(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.pool = AttentionPool(64, safe)
        self.head = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, NCLS))

    def forward(self, pts, mask):
        pooled, ent = self.pool(self.point_mlp(pts), mask)
        return {"logits": self.head(pooled), "attn_entropy": ent}


def _cloud(g, cls, n):
    u = torch.randn(n, 3, generator=g)
    if cls == 0:       # sphere surface
        p = u / u.norm(dim=1, keepdim=True)
    elif cls == 1:     # cube surface
        p = torch.rand(n, 3, generator=g) * 2 - 1
        ax = torch.randint(0, 3, (n,), generator=g)
        p[torch.arange(n), ax] = torch.sign(p[torch.arange(n), ax])
    else:              # cylinder side
        th = torch.rand(n, generator=g) * 2 * math.pi
        p = torch.stack([th.cos(), th.sin(), torch.rand(n, generator=g) * 2 - 1], 1)
    scale = 0.7 + 0.6 * torch.rand(1, generator=g)
    return p * scale + 0.02 * torch.randn(n, 3, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = AttnPointNet(safe=fixed)
    opt = torch.optim.RMSprop(model.parameters(), lr=3e-3)
    steps, bs = 150, 24
    batches = []
    for s in range(steps):
        y = torch.randint(0, NCLS, (bs,), generator=g)
        pts = torch.zeros(bs, NPTS, 3)
        mask = torch.zeros(bs, NPTS, dtype=torch.bool)
        short_scans = s >= 30 and s % 7 == 3          # occasional batch with occluded scans
        for i in range(bs):
            n = NPTS
            if short_scans and i < 3:
                n = int(torch.randint(16, 40, (1,), generator=g))
            pts[i, :n] = _cloud(g, int(y[i]), n)
            mask[i, :n] = True
        batches.append(((pts, mask), y))

    def loss_fn(out, y):
        return F.cross_entropy(out["logits"], y) - 0.01 * out["attn_entropy"].mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
