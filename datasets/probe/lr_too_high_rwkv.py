"""RWKV-v4-style time-mixing language model (token shift, receptance/key/value
projections, per-channel exponential-decay WKV recurrence written naively in
plain torch as in the original "RWKV in 150 lines" reference) trained with Adam
at lr 0.15-0.25 instead of the usual ~1e-3.  Every Adam step moves each weight
by ~lr, so the key projection outputs grow step after step (|k| ~30 by step
10) even while the loss still falls, until exp(k) in the recurrence passes
float32 range (k > ~88) and the loss turns NaN (step ~15-130 by seed).
fixed=True: the same run at a sane lr (1e-3 range); nothing else changes.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("RWKV-LM issues / RWKV-v4 'RWKV in 150 lines' naive WKV recurrence; known pattern: "
          "RWKV training diverges (loss NaN) when lr is set far above the recommended 6e-4..1e-3 "
          "because exp(k) in the WKV kernel overflows")

VOCAB = 24
D = 32
T = 24
B = 16


class TimeMix(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.time_decay = nn.Parameter(torch.linspace(-1.0, 1.0, d))
        self.time_first = nn.Parameter(torch.full((d,), math.log(0.3)))
        self.mix_k = nn.Parameter(torch.full((d,), 0.5))
        self.mix_v = nn.Parameter(torch.full((d,), 0.5))
        self.mix_r = nn.Parameter(torch.full((d,), 0.5))
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d, bias=False)
        self.receptance = nn.Linear(d, d, bias=False)
        self.output = nn.Linear(d, d, bias=False)

    def forward(self, x):  # x: (B, T, D)
        xx = F.pad(x, (0, 0, 1, -1))  # token shift: x_{t-1}
        xk = x * self.mix_k + xx * (1 - self.mix_k)
        xv = x * self.mix_v + xx * (1 - self.mix_v)
        xr = x * self.mix_r + xx * (1 - self.mix_r)
        k = self.key(xk)
        v = self.value(xv)
        r = torch.sigmoid(self.receptance(xr))
        w = torch.exp(-torch.exp(self.time_decay))  # per-channel decay in (0,1)
        u = self.time_first
        a = torch.zeros_like(x[:, 0])
        b = torch.zeros_like(x[:, 0])
        outs = []
        for t in range(x.shape[1]):
            kt, vt = k[:, t], v[:, t]
            eku = torch.exp(u + kt)
            outs.append((a + eku * vt) / (b + eku))
            ek = torch.exp(kt)
            a = w * a + ek * vt
            b = w * b + ek
        wkv = torch.stack(outs, dim=1)
        return self.output(r * wkv)


class ChannelMix(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mix_k = nn.Parameter(torch.full((d,), 0.5))
        self.mix_r = nn.Parameter(torch.full((d,), 0.5))
        self.key = nn.Linear(d, 2 * d, bias=False)
        self.value = nn.Linear(2 * d, d, bias=False)
        self.receptance = nn.Linear(d, d, bias=False)

    def forward(self, x):
        xx = F.pad(x, (0, 0, 1, -1))
        xk = x * self.mix_k + xx * (1 - self.mix_k)
        xr = x * self.mix_r + xx * (1 - self.mix_r)
        k = torch.square(torch.relu(self.key(xk)))
        return torch.sigmoid(self.receptance(xr)) * self.value(k)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.att = TimeMix(d)
        self.ffn = ChannelMix(d)

    def forward(self, x):
        x = x + self.att(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class RWKV(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.ln0 = nn.LayerNorm(D)
        self.blocks = nn.ModuleList([Block(D) for _ in range(2)])
        self.ln_out = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.ln0(self.emb(idx))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_out(x))


def _make_data(seed, steps):
    g = torch.Generator().manual_seed(1000 + seed)
    # sparse order-1 Markov chain: each token has 3 likely successors
    logits = torch.full((VOCAB, VOCAB), -4.0)
    for i in range(VOCAB):
        nxt = torch.randperm(VOCAB, generator=g)[:3]
        logits[i, nxt] = torch.tensor([2.0, 1.0, 0.5])
    probs = torch.softmax(logits, dim=1)
    batches = []
    for _ in range(steps):
        seq = torch.empty(B, T + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, VOCAB, (B,), generator=g)
        for t in range(T):
            seq[:, t + 1] = torch.multinomial(probs[seq[:, t]], 1, generator=g).squeeze(1)
        batches.append((seq[:, :-1], seq[:, 1:]))
    return batches


def _loss(out, y):
    return F.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    steps = 150
    model = RWKV()
    g = torch.Generator().manual_seed(seed)
    bad_lr = 0.15 + 0.1 * torch.rand(1, generator=g).item()
    lr = 1e-3 * (1.0 + torch.rand(1, generator=g).item()) if fixed else bad_lr
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.99))
    return dict(model=model, optimizer=opt, loss_fn=_loss, batches=_make_data(seed, steps),
                steps=steps, amp_dtype=None, scaler=None)
