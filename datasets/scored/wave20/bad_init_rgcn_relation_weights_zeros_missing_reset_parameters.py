"""R-GCN (Schlichtkrull et al. 2018) entity classifier on a small multi-relational
graph, with a hand-written relational layer whose per-relation and root weights
are allocated with torch.zeros(R, d_in, d_out) and a reset_parameters() that is
written but never called from __init__.

Mechanism: every relational weight is exactly zero from step 0, so every hidden
activation is ReLU(bias) = 0 and the output is the last bias alone. The gradient
of any weight is (input activation)^T x (upstream gradient), and both factors are
zero in every layer (zero activations below, zero weights above), so no weight
ever moves; only the output bias can fit the (balanced) class prior, and the
cross-entropy stays at ~log(C): a stall.
ORIGIN is the first relational layer (layers.0): its zero weights kill the signal
from the entity embeddings before anything else.
Fix: call reset_parameters() (xavier_uniform_ on relation and root weights).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = "hand-written RGCN layer as in many DGL/PyG re-implementations; parameters allocated with torch.zeros and reset_parameters() never called (common 'GNN loss stuck at ln(C), grads all zero' report)"


class RelGraphConv(nn.Module):
    def __init__(self, din, dout, rels, fixed):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(rels, din, dout))
        self.root = nn.Parameter(torch.zeros(din, dout))
        self.bias = nn.Parameter(torch.zeros(dout))
        if fixed:
            self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.weight)
        nn.init.xavier_uniform_(self.root)
        nn.init.zeros_(self.bias)

    def forward(self, x, adjs):
        # adjs: (R, N, N) row-normalised per relation
        out = x @ self.root + self.bias
        msg = torch.bmm(torch.matmul(adjs, x), self.weight).sum(0)
        return out + msg


class RGCN(nn.Module):
    def __init__(self, n_nodes, h, c, rels, L, fixed):
        super().__init__()
        self.emb = nn.Embedding(n_nodes, h)
        self.layers = nn.ModuleList([RelGraphConv(h, h if i < L - 1 else c, rels, fixed) for i in range(L)])
        self.act = nn.ReLU()

    def forward(self, idx, adjs):
        x = self.emb(idx)
        for i, l in enumerate(self.layers):
            x = l(x, adjs)
            if i < len(self.layers) - 1:
                x = self.act(x)
        return x


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=150, h=32, R=4, L=3, lr=0.01, steps=80), dict(n=120, h=24, R=6, L=3, lr=0.005, steps=60),
           dict(n=160, h=16, R=5, L=4, lr=0.01, steps=90)][seed % 3]
    g = torch.Generator().manual_seed(seed)
    n, R, c = cfg["n"], cfg["R"], 4
    y = torch.randint(0, c, (n,), generator=g)
    adjs = []
    for r in range(R):
        p = torch.where((y[:, None] + r) % c == y[None, :], 0.08, 0.01)
        a = (torch.rand(n, n, generator=g) < p).float()
        adjs.append(a / a.sum(1, keepdim=True).clamp_min(1.0))
    adjs = torch.stack(adjs)
    torch.manual_seed(seed)
    model = RGCN(n, cfg["h"], c, R, cfg["L"], fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=5e-4)
    idx = torch.arange(n)
    batches = [((idx, adjs), y) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=cfg["steps"])
