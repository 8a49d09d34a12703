"""MQ-RNN (Wen et al. 2017) multi-horizon quantile demand forecaster: an LSTM encoder over the
sales history (standardised log1p units + promo flag), a global MLP decoder producing a context
per horizon, and a local MLP producing the P10/P50/P90 for each of H horizons; trained with the
summed pinball (quantile) loss.

Mechanism: the user swapped Adam for RMSprop and kept lr=0.5-1.0 from a gradient-boosting
config ("learning_rate").  RMSprop's per-parameter normalised steps of size ~lr on every
weight are enormous for an LSTM + MLP: the update/weight ratio is ~1e-1, the recurrent and
decoder weights are thrown around every step, the quantile heads oscillate between extremes
and the pinball loss never goes below its initial level.

ORIGIN: None - a global optimiser setting.
Fix: lr=1e-3 (same RMSprop).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Wen et al. 2017 'A Multi-Horizon Quantile Recurrent Forecaster' (MQ-RNN); lr copied from a GBM config into RMSprop"

QS = torch.tensor([0.1, 0.5, 0.9])


class MQRNN(nn.Module):
    def __init__(self, hidden, H, ctx=8):
        super().__init__()
        self.H, self.ctx = H, ctx
        self.enc = nn.LSTM(2, hidden, batch_first=True)
        self.global_mlp = nn.Sequential(nn.Linear(hidden + H, 4 * hidden), nn.ReLU(), nn.Linear(4 * hidden, (H + 1) * ctx))
        self.local_mlp = nn.Sequential(nn.Linear(2 * ctx + 1, hidden), nn.ReLU(), nn.Linear(hidden, 3))

    def forward(self, hist, fut_promo):  # hist (B, L, 2), fut_promo (B, H)
        _, (h, _) = self.enc(hist)
        c = self.global_mlp(torch.cat([h[-1], fut_promo], 1)).view(-1, self.H + 1, self.ctx)
        ca, ch = c[:, :1].expand(-1, self.H, -1), c[:, 1:]
        return self.local_mlp(torch.cat([ch, ca, fut_promo[:, :, None]], -1))  # (B, H, 3)


def pinball(pred, y):
    e = y[:, :, None] - pred
    return torch.maximum(QS * e, (QS - 1) * e).sum(-1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=32, H=7, L=28, bs=32, lr=0.5), dict(h=24, H=14, L=28, bs=32, lr=1.0), dict(h=48, H=7, L=21, bs=24, lr=0.8)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    model = MQRNN(cfg["h"], cfg["H"])
    steps = 60
    L, H = cfg["L"], cfg["H"]
    batches = []
    for _ in range(steps):
        B = cfg["bs"]
        t = torch.arange(L + H).float()
        level = torch.randn(B, 1, generator=g)
        phase = torch.rand(B, 1, generator=g) * 7
        promo = (torch.rand(B, L + H, generator=g) < 0.15).float()
        y = level + 0.6 * torch.sin(2 * 3.1416 * (t + phase) / 7) + 0.8 * promo + 0.3 * torch.randn(B, L + H, generator=g)
        hist = torch.stack([y[:, :L], promo[:, :L]], -1)
        batches.append(((hist, promo[:, L:]), y[:, L:]))
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3 if fixed else cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=pinball, batches=batches, steps=steps)
