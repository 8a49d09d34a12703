"""LaneGCN-style actor-to-actor (A2A) interaction for motion forecasting, trained with fp16
autocast + GradScaler.  Actor features come from a small 1D-conv history encoder; the A2A block
gates messages by pairwise actor distance (distance-thresholded attention) and the head
regresses the future displacements.

Mechanism: the pairwise squared distances are computed with the "Gram trick"
|p_i|^2 + |p_j|^2 - 2 p_i.p_j, where p_i.p_j is a torch.bmm.  Under autocast bmm runs in
float16; the actor positions are scene coordinates in metres relative to the map tile origin
(up to ~300 m), so p_i.p_j reaches ~9e4 > 65504 and overflows to inf; |p_i|^2 + |p_j|^2 - 2*inf gives -inf
'distances', the distance-gated attention logits become +inf, softmax turns them into NaN and
the loss is NaN in the first forward pass.  GradScaler cannot help: this is a
forward overflow, not a gradient underflow.

ORIGIN: ``a2a.dist`` -- the module holding the half-precision bmm that produces the first inf.
Fix: compute the pairwise distances in float32 (autocast disabled for that op, fixed=True).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "a2a.dist"
SOURCE = ("uber-research/LaneGCN / mmdet3d-style pairwise-distance helpers; fp16 AMP NaN reports "
          "caused by x@x.T distance computations on metre-scale scene coordinates.")


class PairwiseSqDist(nn.Module):
    def __init__(self, fp32=False):
        super().__init__()
        self.fp32 = fp32

    def forward(self, p):                                   # B x N x 2
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                p = p.float()
                return torch.cdist(p, p) ** 2
        sq = (p * p).sum(-1)
        gram = torch.bmm(p, p.transpose(1, 2))              # fp16 under autocast
        return sq[:, :, None] + sq[:, None, :] - 2 * gram


class A2A(nn.Module):
    def __init__(self, d, radius, fp32):
        super().__init__()
        self.dist = PairwiseSqDist(fp32)
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.radius2 = radius ** 2

    def forward(self, h, pos):
        d2 = self.dist(pos)
        att = torch.bmm(self.q(h), self.k(h).transpose(1, 2)) / h.shape[-1] ** 0.5
        att = att.float() - d2.float() / self.radius2       # soft distance gating
        a = torch.softmax(att, -1)
        return self.norm(h + self.out(torch.bmm(a.to(h.dtype), self.v(h))))


class LaneGCNActorNet(nn.Module):
    def __init__(self, d, T, H, radius, fp32):
        super().__init__()
        self.H = H
        self.enc = nn.Sequential(nn.Conv1d(3, d, 3, padding=1), nn.ReLU(),
                                 nn.Conv1d(d, d, 3, padding=1), nn.ReLU())
        self.a2a = A2A(d, radius, fp32)
        self.head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, H * 2))

    def forward(self, hist, pos):                           # hist: B x N x T x 3 (dx, dy, valid)
        B, N, T, _ = hist.shape
        h = self.enc(hist.reshape(B * N, T, 3).transpose(1, 2)).max(-1).values.view(B, N, -1)
        h = self.a2a(h, pos)
        return self.head(h).view(B, N, self.H, 2)


def make_batch(g, bs, N, T, H):
    pos = torch.rand(bs, N, 2, generator=g) * 250.0 + 20.0          # metres in the map tile
    vel = torch.randn(bs, N, 2, generator=g) * 0.8
    t = torch.arange(-T + 1, 1).float()[None, None, :, None]
    disp = vel[:, :, None] * torch.ones_like(t)                       # per-step displacement
    hist = torch.cat([disp + 0.05 * torch.randn(bs, N, T, 2, generator=g), torch.ones(bs, N, T, 1)], -1)
    tf = torch.arange(1, H + 1).float()[None, None, :, None]
    fut = vel[:, :, None] * tf
    return (hist, pos), fut


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, N=8, T=10, H=6, lr=1e-3, bs=8, steps=60),
           dict(d=48, N=12, T=8, H=8, lr=2e-3, bs=4, steps=50),
           dict(d=24, N=6, T=12, H=5, lr=5e-4, bs=16, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 31)
    model = LaneGCNActorNet(cfg["d"], cfg["T"], cfg["H"], radius=30.0, fp32=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cpu")
    batches = [make_batch(g, cfg["bs"], cfg["N"], cfg["T"], cfg["H"]) for _ in range(cfg["steps"])]

    def loss_fn(out, fut):
        return F.smooth_l1_loss(out.float(), fut)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=torch.float16, scaler=scaler)
