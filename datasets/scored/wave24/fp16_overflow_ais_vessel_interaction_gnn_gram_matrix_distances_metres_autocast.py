"""Vessel-interaction model for AIS encounter scenes (collision-avoidance behaviour): each
scene holds N vessels with positions relative to the scene centre in metres (local ENU),
SOG, COG, length and type; a node encoder embeds each vessel, an interaction layer weights
neighbours by a Gaussian kernel of their pairwise distance, and a head predicts each
vessel's standardised course change over the next minute; Huber loss, Adam, trained under
float16 autocast (mixed precision to fit more scenes per batch).

Mechanism: the interaction layer computes squared distances with the usual Gram-matrix trick
``d2 = |p_i|^2 + |p_j|^2 - 2 p_i.p_j`` where ``p @ p.T`` is a matmul, which autocast runs in
float16. Port-basin scenes (vessels within ~100 m of the centre) give products (and their
doubles) < 65504 and train fine, but the first coastal encounter scene (vessels 2-15 km
apart, seed-dependent step) gives p_i.p_j ~ 1e6-1e8 > 65504: the Gram entries (and
2 p_i.p_j) become inf, d2 = -inf, the kernel weights exp(-d2/2s^2) = inf, their
normalisation inf/inf = NaN, and the loss is NaN.

ORIGIN = "interaction": the module whose half-precision matmul overflows first; everything
before it is finite.

Fix: run the distance computation in float32 (``torch.autocast(enabled=False)`` around the
Gram matrix, as for any op whose range exceeds fp16). Same model, data, optimiser, steps and
autocast elsewhere.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "interaction"
SOURCE = ("pairwise-distance via matmul (||a||^2 + ||b||^2 - 2ab) overflowing in fp16 under "
          "autocast (PyTorch forum / GitHub issues on cdist and Gram matrices in AMP); "
          "AIS ship-encounter / collision-avoidance interaction models in local ENU metres")

SIGMA_M = 3000.0


class Interaction(nn.Module):
    def __init__(self, hidden, fp32_distances):
        super().__init__()
        self.msg = nn.Linear(hidden, hidden)
        self.fp32 = fp32_distances

    def forward(self, h, pos):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                p = pos.float()
                gram = p @ p.transpose(1, 2)
        else:
            gram = pos @ pos.transpose(1, 2)                  # fp16 under autocast
        sq = (pos * pos).sum(-1)
        d2 = sq.unsqueeze(2) + sq.unsqueeze(1) - 2 * gram
        w = torch.exp(-d2.float() / (2 * SIGMA_M ** 2))
        w = w / w.sum(-1, keepdim=True)
        return h + torch.relu(self.msg(w.to(h.dtype) @ h))


class EncounterNet(nn.Module):
    def __init__(self, d_in, hidden, fp32_distances):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.interaction = Interaction(hidden, fp32_distances)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, feats, pos):
        h = self.enc(feats)
        return self.head(self.interaction(h, pos)).squeeze(-1)


def _scenes(g, n, N, coastal):
    radius = torch.where(coastal, 2000 + 13000 * torch.rand(n, generator=g), 30 + 70 * torch.rand(n, generator=g))
    pos = (torch.rand(n, N, 2, generator=g) * 2 - 1) * radius.view(n, 1, 1)
    sog = 2 + 12 * torch.rand(n, N, generator=g)
    cog = 6.2832 * torch.rand(n, N, generator=g)
    length = 20 + 200 * torch.rand(n, N, generator=g) ** 2
    vtype = torch.randint(0, 3, (n, N), generator=g)
    # target: avoidance turn ~ sum over neighbours of closeness (in units of the scene size),
    # bearing side and size ratio, plus own manoeuvrability
    rel = pos.unsqueeze(1) - pos.unsqueeze(2)
    dist = rel.norm(dim=-1) / radius.view(n, 1, 1) + torch.eye(N) * 1e3
    side = torch.sign(torch.sin(torch.atan2(rel[..., 1], rel[..., 0]) - cog.unsqueeze(2)))
    turn = (side * torch.exp(-dist) * (length.unsqueeze(1) / length.unsqueeze(2)).clamp(max=3)).sum(-1)
    turn = turn * (1.2 - 0.4 * (vtype == 2).float()) - 0.1 * (sog - 8) / 4
    turn = turn + 0.05 * torch.randn(n, N, generator=g)
    feats = torch.cat([((sog - 8) / 3.5).unsqueeze(-1), torch.sin(cog).unsqueeze(-1), torch.cos(cog).unsqueeze(-1),
                       ((length - 90) / 70).unsqueeze(-1), nn.functional.one_hot(vtype, 3).float(),
                       (pos / radius.view(n, 1, 1))], -1)
    return feats, pos, turn / 3.5


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(11000 + seed)
    N = [8, 12, 10][seed % 3]
    hidden = [32, 48, 64][seed % 3]
    bs = [16, 12, 20][seed % 3]
    lr = [2e-3, 1e-3, 1.5e-3][seed % 3]
    first_coastal = [23, 41, 60][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = EncounterNet(9, hidden, fp32_distances=fixed)
    batches = []
    for i in range(steps):
        coastal = torch.zeros(bs, dtype=torch.bool)
        if i >= first_coastal:
            coastal = torch.rand(bs, generator=g) < 0.3
            if i == first_coastal:
                coastal[0] = True
        f, p, y = _scenes(g, bs, N, coastal)
        batches.append(((f, p), y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(delta=1.0), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
