"""VectorNet (Gao et al. 2020) for motion forecasting, reduced: polyline subgraphs (per-vector
MLP + max-pool + concat, 2 layers) over the agent history polyline and lane polylines, one
global self-attention layer, MLP decoder regressing the agent's future (MSE), SGD + momentum.

Mechanism: the lr is scaled up linearly with a large batch from a reference config
(lr 0.1-0.3 with momentum 0.9) for a network with no normalisation in the subgraph MLPs.  The
first updates overshoot, the effective step grows with the momentum buffer, the weights and
activations blow up geometrically and the loss overflows to inf/NaN within a few dozen steps.

ORIGIN: None -- the lr is global; no single layer is at fault.
Fix: lr=3e-3, 33-100x lower (fixed=True), everything else identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("VectorNet re-implementations (e.g. xk-huang/yet-another-vectornet); reports of NaN "
          "loss after applying the linear lr scaling rule without warmup.")


class SubGraphLayer(nn.Module):
    def __init__(self, cin, h):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(cin, h), nn.ReLU())

    def forward(self, x):                              # P x V x C
        h = self.mlp(x)
        agg = h.max(1, keepdim=True).values.expand_as(h)
        return torch.cat([h, agg], -1)


class VectorNet(nn.Module):
    def __init__(self, h, H):
        super().__init__()
        self.H = H
        self.sub1 = SubGraphLayer(6, h)
        self.sub2 = SubGraphLayer(2 * h, h)
        self.q = nn.Linear(2 * h, 2 * h)
        self.k = nn.Linear(2 * h, 2 * h)
        self.v = nn.Linear(2 * h, 2 * h)
        self.dec = nn.Sequential(nn.Linear(2 * h, 2 * h), nn.ReLU(), nn.Linear(2 * h, H * 2))

    def forward(self, vecs):                           # B x P x V x 6 (start xy, end xy, type, idx)
        B, P, V, C = vecs.shape
        poly = self.sub2(self.sub1(vecs.view(B * P, V, C))).max(1).values.view(B, P, -1)
        att = torch.softmax(self.q(poly[:, :1]) @ self.k(poly).transpose(1, 2) / poly.shape[-1] ** 0.5, -1)
        g = att @ self.v(poly)                         # agent polyline attends to the scene
        return self.dec(g[:, 0]).view(B, self.H, 2)


def make_batch(g, bs, P, V, H):
    vel = torch.randn(bs, 2, generator=g)
    t = torch.arange(-V, 1).float()
    traj = vel[:, None] * t[None, :, None]                              # agent history, ends at 0
    agent = torch.cat([traj[:, :-1], traj[:, 1:], torch.zeros(bs, V, 1),
                       torch.arange(V).float()[None, :, None].expand(bs, V, 1) / V], -1)
    lanes = []
    for _ in range(P - 1):
        off = torch.randn(bs, 1, 2, generator=g) * 3
        d = F.normalize(vel + 0.3 * torch.randn(bs, 2, generator=g), dim=-1)[:, None]
        pts = off + d * torch.arange(V + 1).float()[None, :, None]
        lanes.append(torch.cat([pts[:, :-1], pts[:, 1:], torch.ones(bs, V, 1),
                                torch.arange(V).float()[None, :, None].expand(bs, V, 1) / V], -1))
    vecs = torch.stack([agent] + lanes, 1)
    fut = vel[:, None] * torch.arange(1, H + 1).float()[None, :, None]
    return vecs, fut


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=32, P=5, V=8, H=10, lr=0.2, bs=32, steps=80),
           dict(h=64, P=4, V=6, H=12, lr=0.3, bs=16, steps=100),
           dict(h=24, P=6, V=10, H=8, lr=0.1, bs=64, steps=100)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 71)
    model = VectorNet(cfg["h"], cfg["H"])
    opt = torch.optim.SGD(model.parameters(), lr=3e-3 if fixed else cfg["lr"], momentum=0.9)
    batches = [make_batch(g, cfg["bs"], cfg["P"], cfg["V"], cfg["H"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
