"""Log-optimal (Kelly) allocator: a GRU reads the recent return history of N assets and outputs
long/short weights (tanh scores, L1-normalised) levered L times; the loss is the negative
expected log growth  -mean(log(1 + L * w . r_next)).

Mechanism: the log is taken of the raw levered gross return.  Training is calm until a batch
contains a crash day (a -35..-45% gap in one asset, e.g. an earnings collapse): wherever the
allocator is heavily in that name, 1 + L*w.r is <= 0, torch.log returns NaN/-inf, and the
loss and all gradients become non-finite.

ORIGIN: None - the unsafe op is the log in the loss function.
Fix: log of the gross return clamped at a small positive floor (clamp_min(1e-4)), i.e.
a bankrupt-path floor, everything else unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = "Kelly / log-utility portfolio networks (e.g. Jiang et al. 2017 EIIE log-return reward); log of non-positive levered wealth"


class KellyGRU(nn.Module):
    def __init__(self, hidden, lev):
        super().__init__()
        self.gru = nn.GRU(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        self.lev = lev

    def forward(self, hist):  # hist (B, N, L)
        B, N, L = hist.shape
        _, h = self.gru(hist.reshape(B * N, L, 1))
        s = torch.tanh(self.head(h[-1])).view(B, N)
        return self.lev * s / (s.abs().sum(-1, keepdim=True) + 1e-6)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(N=3, L=20, h=16, bs=16, lr=3e-3, lev=6.0, crash=40), dict(N=2, L=15, h=24, bs=24, lr=2e-3, lev=8.0, crash=25),
           dict(N=3, L=25, h=12, bs=16, lr=3e-3, lev=8.0, crash=50)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1300 + seed)
    model = KellyGRU(cfg["h"], cfg["lev"])
    steps = 60
    floor = 1e-4

    def loss_fn(w, r):
        gross = 1 + (w * r).sum(-1)
        if fixed:
            gross = gross.clamp_min(floor)
        return -torch.log(gross).mean()

    batches = []
    for s in range(steps):
        B, N, L = cfg["bs"], cfg["N"], cfg["L"]
        mom = torch.randn(B, N, generator=g) * 0.01
        hist = mom[:, :, None] + 0.01 * torch.randn(B, N, L, generator=g)
        r = mom + 0.01 * torch.randn(B, N, generator=g)
        if s == cfg["crash"]:
            r[:, 0] = -0.35 - 0.1 * torch.rand(B, generator=g)  # gap-down day in asset 0
            hist[:, 0] = 0.01 + 0.01 * torch.randn(B, L, generator=g)  # it was trending up before
        batches.append((hist * 50, r))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
