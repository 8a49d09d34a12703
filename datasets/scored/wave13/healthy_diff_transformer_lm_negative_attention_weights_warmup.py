"""Healthy: Differential Transformer decoder LM (Ye et al. 2024, DIFF attention).

Mechanism that looks alarming but is fine: each head computes
    attn = softmax(Q1 K1^T / sqrt(d)) - lambda * softmax(Q2 K2^T / sqrt(d))
with lambda = exp(lq1.lk1) - exp(lq2.lk2) + lambda_init, so the attention maps contain
*negative* weights and rows that do not sum to one; the per-head RMS (GroupNorm-like)
normalisation and the (1 - lambda_init) output scale are part of the design.  Training uses
AdamW with a linear warmup driven by a LambdaLR stepped from an optimizer step post-hook,
so the first steps barely move the loss.  Nothing is wrong: the loss falls steadily once
the warmup is over.

ORIGIN is None: nothing fails.  "fixed" is identical.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Ye et al. 2024 'Differential Transformer' (microsoft/unilm Diff-Transformer "
          "multihead_diffattn.py: lambda re-parameterisation, lambda_init schedule, sub-layer "
          "RMSNorm); negative attention weights are by design")


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5, affine=True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d)) if affine else None

    def forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y * self.weight if self.weight is not None else y


class DiffAttention(nn.Module):
    def __init__(self, d_model, n_heads, depth):
        super().__init__()
        self.h = n_heads
        self.hd = d_model // n_heads // 2          # each head has two q/k halves
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)
        self.lambda_init = 0.8 - 0.6 * math.exp(-0.3 * depth)
        self.lambda_q1 = nn.Parameter(torch.randn(self.hd) * 0.1)
        self.lambda_k1 = nn.Parameter(torch.randn(self.hd) * 0.1)
        self.lambda_q2 = nn.Parameter(torch.randn(self.hd) * 0.1)
        self.lambda_k2 = nn.Parameter(torch.randn(self.hd) * 0.1)
        self.subln = RMSNorm(2 * self.hd, affine=False)

    def forward(self, x):
        B, T, D = x.shape
        q = self.q_proj(x).view(B, T, 2 * self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, 2 * self.h, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.h, 2 * self.hd).transpose(1, 2)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        w = torch.softmax(s.masked_fill(mask, float("-inf")), -1).view(B, self.h, 2, T, T)
        lam = (torch.exp((self.lambda_q1 * self.lambda_k1).sum()) -
               torch.exp((self.lambda_q2 * self.lambda_k2).sum()) + self.lambda_init)
        attn = w[:, :, 0] - lam * w[:, :, 1]       # may be negative
        o = self.subln(attn @ v) * (1 - self.lambda_init)
        return self.out_proj(o.transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    def __init__(self, d, h, depth):
        super().__init__()
        self.norm1 = RMSNorm(d)
        self.attn = DiffAttention(d, h, depth)
        self.norm2 = RMSNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class DiffLM(nn.Module):
    def __init__(self, vocab, d, h, layers, ctx):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList([Block(d, h, i + 1) for i in range(layers)])
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.size(1), device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


def lm_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))


def _corpus(g, n, T, vocab):
    # Markov text with a repeated span (induction-style copy) in the second half
    trans = torch.softmax(torch.randn(vocab, vocab, generator=g) * 2.0, -1)
    seq = torch.zeros(n, T + 1, dtype=torch.long)
    cur = torch.randint(0, vocab, (n,), generator=g)
    for t in range(T + 1):
        seq[:, t] = cur
        cur = torch.multinomial(trans[cur], 1, generator=g).squeeze(1)
    half = (T + 1) // 2
    seq[:, half:2 * half] = seq[:, :half]
    return seq


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(vocab=48, d=64, h=2, layers=2, T=32, bs=16, steps=120, lr=3e-3, warm=30),
           dict(vocab=64, d=96, h=3, layers=2, T=28, bs=12, steps=140, lr=2e-3, warm=40),
           dict(vocab=40, d=64, h=2, layers=3, T=24, bs=20, steps=100, lr=4e-3, warm=20)][seed % 3]
    model = DiffLM(cfg["vocab"], cfg["d"], cfg["h"], cfg["layers"], cfg["T"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], betas=(0.9, 0.95), weight_decay=0.1)
    warm = cfg["warm"]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    opt.register_step_post_hook(lambda o, a, k: sched.step())
    data = _corpus(g, cfg["steps"] * cfg["bs"], cfg["T"], cfg["vocab"])
    bs = cfg["bs"]
    batches = [(data[i * bs:(i + 1) * bs, :-1], data[i * bs:(i + 1) * bs, 1:])
               for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=lm_loss, batches=batches, steps=cfg["steps"])
