"""Linear-warmup LambdaLR that forgot the min(1, .) clamp: the lr never stops rising.

A small decoder-only LM with rotary position embeddings (pre-norm, RMSprop) uses the usual
"linear warmup, then constant" multiplier, attached as a LambdaLR that is stepped inside the
optimizer's step.  The lambda was written as (step + 1) / warmup instead of
min(1, (step + 1) / warmup), so after the 4-step warmup the learning rate keeps growing
linearly: 25x the intended 2e-3 at step 100, 75x at step 300.  The first ~100 steps train
normally (loss falls from log(32) towards the entropy of the Markov source), then the
per-step update/weight ratio climbs far above 1e-3, RMSprop's normalised steps overshoot,
the loss jumps back up to around its starting value and, as the lr keeps rising, past it
(tail loss several times the initial loss; no NaN needed).
Fix: the clamped lambda min(1, (step+1)/warmup); nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Linear-warmup LambdaLR written as lambda s: s / warmup without min(1, ...) (seen in "
          "many hand-rolled schedulers; HF get_constant_schedule_with_warmup clamps with "
          "max(1, warmup) / min(1, ...) for exactly this reason)")

V, T = 32, 24


def rope(x, cos, sin):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)


class RotaryAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.dh = h, d // h
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.dh, 2).float() / self.dh))
        ang = torch.arange(T).float()[:, None] * inv[None]
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())
        self.register_buffer("mask", torch.ones(T, T).tril().bool())

    def forward(self, x):
        B, L, D = x.shape
        sh = lambda t: t.view(B, L, self.h, self.dh).transpose(1, 2)
        q, k, v = sh(self.q(x)), sh(self.k(x)), sh(self.v(x))
        q, k = rope(q, self.cos[:L], self.sin[:L]), rope(k, self.cos[:L], self.sin[:L])
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh)
        att = att.masked_fill(~self.mask[:L, :L], float("-inf")).softmax(-1)
        return self.o((att @ v).transpose(1, 2).reshape(B, L, D))


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.n1, self.attn = nn.LayerNorm(d), RotaryAttention(d, h)
        self.n2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.ffn(self.n2(x))


class RopeLM(nn.Module):
    def __init__(self, d=48, h=4, n=2):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        self.blocks = nn.ModuleList([Block(d, h) for _ in range(n)])
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, V, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x)
        return self.lm_head(self.norm(x))


class ScheduledRMSprop(torch.optim.RMSprop):
    def attach(self, fn):
        self.sched = torch.optim.lr_scheduler.LambdaLR(self, fn)

    def step(self, closure=None):
        out = super().step(closure)
        self.sched.step()
        return out


def markov_source(g):
    # sparse random transition matrix: each token has 3 likely successors
    P = torch.full((V, V), 0.02)
    for a in range(V):
        nxt = torch.randperm(V, generator=g)[:3]
        P[a, nxt] += torch.tensor([3.0, 2.0, 1.0])
    return P / P.sum(1, keepdim=True)


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RopeLM()
    P = markov_source(g)
    steps, bs, warmup = 300, 16, 4
    batches = []
    for _ in range(steps):
        seq = torch.empty(bs, T + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, V, (bs,), generator=g)
        for t in range(T):
            seq[:, t + 1] = torch.multinomial(P[seq[:, t]], 1, generator=g).squeeze(1)
        batches.append((seq[:, :-1], seq[:, 1:]))
    if fixed:
        lam = lambda s: min(1.0, (s + 1) / warmup)
    else:
        lam = lambda s: (s + 1) / warmup          # missing min(1, .)
    opt = ScheduledRMSprop(model.parameters(), lr=2e-3, alpha=0.99)
    opt.attach(lam)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
