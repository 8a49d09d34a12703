"""Kool-style attention model (transformer encoder + single-head pointer decoder with tanh clipping)
trained by imitation to pick the next city of a partial TSP tour (teacher: nearest unvisited city).

Mechanism: the model is a post-LN transformer encoder and the practitioner trains it with Adam at
lr = 2e-2..4e-2 and no warmup (the lr the team used for its MLP baselines; Kool et al. use 1e-4).
Adam's per-parameter steps of ~lr move every attention/FFN weight by ~0.03 per step; within a few
steps the query/key projections and the LayerNorm gains are pushed so far that the encoder's outputs
become nearly identical for all cities and the compatibilities collapse onto the tanh clip
(update/weight ratios >> 1e-3). The pointer distribution then ignores the geometry and the
cross-entropy bounces around log(#unvisited): the loss stops improving (no NaN), while the same
run at a 20x lower lr learns the nearest-neighbour rule.

ORIGIN: None -- the step size is global; every layer is overshot at once.

Fix: lr divided by 20 (1e-3 to 2e-3); model, data and steps unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Kool et al. 'Attention, Learn to Solve Routing Problems!' (ICLR 2019, Adam lr 1e-4); Xiong "
          "et al. 'On Layer Normalization in the Transformer Architecture' (ICML 2020) on post-LN "
          "transformers needing warmup / small lr")


class AttentionTSP(nn.Module):
    def __init__(self, d, layers, clip=10.0):
        super().__init__()
        self.embed = nn.Linear(2, d)
        enc = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)  # post-LN
        self.encoder = nn.TransformerEncoder(enc, layers, enable_nested_tensor=False)
        self.ctx = nn.Linear(3 * d, d)
        self.key = nn.Linear(d, d, bias=False)
        self.clip = clip

    def forward(self, xy, cur, first, visited):
        h = self.encoder(self.embed(xy))                               # (B, n, d)
        b = torch.arange(xy.shape[0])
        q = self.ctx(torch.cat([h.mean(1), h[b, cur], h[b, first]], -1))
        u = torch.einsum("bd,bnd->bn", q, self.key(h)) / math.sqrt(h.shape[-1])
        u = self.clip * torch.tanh(u)
        return u.masked_fill(visited, float("-inf"))                  # visited cities excluded


def _states(g, bs, n):
    xy = torch.rand(bs, n, 2, generator=g)
    D = torch.cdist(xy, xy)
    visited = torch.zeros(bs, n, dtype=torch.bool)
    first = torch.randint(0, n, (bs,), generator=g)
    k = torch.randint(1, n - 1, (bs,), generator=g)           # tour length so far
    cur = first.clone()
    y = torch.zeros(bs, dtype=torch.long)
    for i in range(bs):
        visited[i, cur[i]] = True
        for _ in range(int(k[i]) - 1):
            d = D[i, cur[i]].masked_fill(visited[i], float("inf"))
            cur[i] = d.argmin()
            visited[i, cur[i]] = True
        y[i] = D[i, cur[i]].masked_fill(visited[i], float("inf")).argmin()
    return (xy, cur, first, visited), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [64, 48, 32][seed % 3]
    layers = [2, 3, 2][seed % 3]
    bs = [64, 48, 96][seed % 3]
    n = [12, 16, 10][seed % 3]
    lr = [3e-2, 2e-2, 4e-2][seed % 3]
    if fixed:
        lr = lr / 20
    steps = 150
    torch.manual_seed(seed)
    model = AttentionTSP(d, layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_states(g, bs, n) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
