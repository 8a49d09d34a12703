"""TGN-style temporal link predictor (Rossi et al. 2020) on a continuous-time
interaction stream: per-node memory-free embeddings are combined with the TGN
TimeEncode cos(w * dt + b) of the time since the node's previous event, a
merge MLP, and a link-prediction MLP on the Hadamard product scoring (src, dst) against a random
negative destination. BCE-with-logits. Trained under float16 autocast.

Mechanism: dt is kept in raw seconds. Under fp16 autocast the TimeEncode Linear
(1 -> d, with TGN's fixed frequencies 1/10**linspace(0, 9, d)) casts dt to half:
any node that was idle for more than 65504 s (~18 h) becomes inf (and w*dt for
w=1 overflows too), cos(inf) = NaN and the loss is NaN at the first batch that
contains such a long gap (a different step per seed, when the stream reaches an
overnight pause). A GradScaler would not help: the overflow is in the forward.
ORIGIN is the time encoder's linear (time_enc.lin), the op where the value
first passes 65504.
Fix: run the time encoder in fp32 (autocast disabled for that op).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "time_enc.lin"
SOURCE = "TGN / TGAT TimeEncode (twitter-research/tgn, PyG TGNMemory) with raw second-valued time deltas under torch.autocast fp16; NaN loss issues on Wikipedia/Reddit with mixed precision"


class TimeEncode(nn.Module):
    def __init__(self, d, fp32):
        super().__init__()
        self.lin = nn.Linear(1, d)
        with torch.no_grad():
            self.lin.weight.copy_((1.0 / 10 ** torch.linspace(0, 9, d)).view(d, 1))
            self.lin.bias.zero_()
        self.fp32 = fp32

    def forward(self, dt):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return torch.cos(self.lin(dt.float().unsqueeze(-1)))
        return torch.cos(self.lin(dt.unsqueeze(-1)))


class TGNLite(nn.Module):
    def __init__(self, n_nodes, d, td, fixed):
        super().__init__()
        self.emb = nn.Embedding(n_nodes, d)
        self.time_enc = TimeEncode(td, fixed)
        self.merge = nn.Sequential(nn.Linear(d + td, d), nn.ReLU(), nn.Linear(d, d))
        self.link = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 1))

    def embed(self, n, dt):
        return self.merge(torch.cat([self.emb(n), self.time_enc(dt).to(self.emb.weight.dtype)], -1))

    def forward(self, src, dst, neg, dt_src, dt_dst, dt_neg):
        hs = self.embed(src, dt_src)
        pos = self.link(hs * self.embed(dst, dt_dst))
        negs = self.link(hs * self.embed(neg, dt_neg))
        return torch.cat([pos, negs]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=100, d=32, td=16, B=64, steps=60, night=25), dict(n=150, d=48, td=32, B=96, steps=80, night=47),
           dict(n=80, d=24, td=16, B=128, steps=50, night=14)][seed % 3]
    g = torch.Generator().manual_seed(seed)
    n, B = cfg["n"], cfg["B"]
    comm = torch.randint(0, 5, (n,), generator=g)
    last = torch.zeros(n)
    t = 0.0
    batches = []
    for step in range(cfg["steps"]):
        src = torch.randint(0, n, (B,), generator=g)
        cand = torch.randint(0, n, (B, 8), generator=g)
        same = comm[cand] == comm[src][:, None]
        dst = cand[torch.arange(B), same.float().argmax(1)]
        neg = torch.randint(0, n, (B,), generator=g)
        gap = 3600.0 * 20 if step == cfg["night"] else 30.0  # overnight pause in the stream
        t = t + gap
        ts = t + torch.rand(B, generator=g) * 60.0
        dts, dtd, dtn = ts - last[src], ts - last[dst], ts - last[neg]
        last[src] = ts; last[dst] = ts
        batches.append(((src, dst, neg, dts, dtd, dtn), torch.cat([torch.ones(B), torch.zeros(B)])))
    torch.manual_seed(seed)
    model = TGNLite(n, cfg["d"], cfg["td"], fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16, scaler=None)
