"""musicnn-style music auto-tagger (Pons et al. 2018: timbral vertical filters + temporal
horizontal filters on a log-mel front end, BN, ReLU, max+mean temporal pooling, dense) over 24
tags (MagnaTagATune-like: few common tags, many rare ones), BCE with logits, AdamW with a linear
warmup + cosine decay attached as an optimizer step hook.

Looks alarming but is healthy: during the warmup the lr is ~0 so the loss is flat at ~0.69 for
the first steps; most tags are rare so the loss first falls because the net predicts 'off' for
everything, and many ReLUs in the front end are inactive on quiet frames. Learning is real and
steady after warmup. ORIGIN is None. The `fixed` flag changes nothing.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "musicnn (Pons & Serra 2019) on MagnaTagATune top tags; HF-style linear warmup + cosine schedule"

N_MEL, N_TAG = 48, 24


class Musicnn(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.timbral = nn.Sequential(nn.Conv2d(1, c, (3, 7), padding=(1, 3)), nn.BatchNorm2d(c), nn.ReLU())
        self.temporal = nn.Sequential(nn.Conv2d(1, c, (9, 1), padding=(4, 0)), nn.BatchNorm2d(c), nn.ReLU())
        self.mid = nn.Sequential(nn.Conv1d(2 * c, 2 * c, 5, padding=2), nn.BatchNorm1d(2 * c), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(4 * c, 64), nn.ReLU(), nn.Linear(64, N_TAG))

    def forward(self, x):  # (B, T, F)
        x = x.unsqueeze(1)
        a = self.timbral(x).amax(-1)   # max over frequency -> (B, c, T)
        b = self.temporal(x).amax(-1)
        h = torch.cat([a, b], 1)
        h = h + self.mid(h)
        return self.head(torch.cat([h.amax(-1), h.mean(-1)], 1))


def _batch(g, n, T):
    prior = torch.linspace(0.45, 0.03, N_TAG)
    y = (torch.rand(n, N_TAG, generator=g) < prior).float()
    x = torch.randn(n, T, N_MEL, generator=g) * 0.7
    t = torch.arange(T).float()
    for k in range(N_TAG):
        idx = y[:, k] > 0
        if k % 2 == 0:
            x[idx, :, (2 * k) % N_MEL] += 1.5  # timbre tag: spectral band
        else:
            x[idx, :, (3 * k) % N_MEL] += 1.5 * (torch.sin(t * (0.2 + 0.05 * k)) > 0).float()  # rhythmic tag
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 12][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs, T = [(16, 64), (24, 48), (12, 80)][seed % 3]
    warmup = [10, 15, 8][seed % 3]
    steps = 100
    model = Musicnn(c)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)

    def lam(s):
        if s < warmup:
            return (s + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (s - warmup) / (steps - warmup)))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lam)
    opt.register_step_post_hook(lambda *_: sched.step())
    batches = [_batch(g, bs, T) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
