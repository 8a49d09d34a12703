"""Healthy run: a two-layer pre-RMSNorm byte-level decoder with grouped-query attention (4 query heads
sharing 2 key/value heads), rotary position embeddings and SwiGLU, trained on right-padded batches
of variable-length byte strings. The loss is the per-SEQUENCE summed negative log-likelihood over
real (non-pad) bytes, averaged over the batch, so its scale is ~100 nats and it jumps with each
batch's length mix; the AdamW learning rate warms up linearly over the first 30 steps (so the first
steps barely move) and then decays with a cosine. Large, lumpy loss values and a slow start look
worrying, but the per-byte NLL falls from ~log(40) to well below it and the run converges normally."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("LLaMA-style decoder (RMSNorm, RoPE, SwiGLU, GQA) with linear warmup + cosine decay; "
          "summed-token NLL per sequence as in fairseq/t5x 'sum' loss normalisation")

V, D, NH, NKV, L, TMAX = 40, 32, 4, 2, 2, 48
HD = D // NH
PAD = 0


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, base=10000.0):
    pos = torch.arange(x.shape[-2], dtype=torch.float32)
    inv = base ** (-torch.arange(0, x.shape[-1], 2, dtype=torch.float32) / x.shape[-1])
    ang = pos[:, None] * inv[None]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)


class GQA(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, NH * HD, bias=False)
        self.k_proj = nn.Linear(D, NKV * HD, bias=False)
        self.v_proj = nn.Linear(D, NKV * HD, bias=False)
        self.o_proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        B, S, _ = x.shape
        q = rope(self.q_proj(x).view(B, S, NH, HD).transpose(1, 2))
        k = rope(self.k_proj(x).view(B, S, NKV, HD).transpose(1, 2))
        v = self.v_proj(x).view(B, S, NKV, HD).transpose(1, 2)
        r = NH // NKV
        y = F.scaled_dot_product_attention(q, k.repeat_interleave(r, 1), v.repeat_interleave(r, 1), is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(B, S, D))


class SwiGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(D, hidden, bias=False)
        self.w3 = nn.Linear(D, hidden, bias=False)
        self.w2 = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(D), GQA()
        self.ffn_norm, self.ffn = RMSNorm(D), SwiGLU()

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.ffn(self.ffn_norm(x))


class ByteLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.layers = nn.ModuleList(Block() for _ in range(L))
        self.norm = RMSNorm(D)
        self.out = nn.Linear(D, V, bias=False)

    def forward(self, ids, mask):
        x = self.tok(ids)
        for layer in self.layers:
            x = layer(x)
        return self.out(self.norm(x)), mask


class WarmupCosineAdamW(torch.optim.AdamW):
    """AdamW that applies its own linear-warmup + cosine schedule inside step()."""

    def __init__(self, params, peak_lr, warmup, total, **kw):
        super().__init__(params, lr=0.0, **kw)
        self.peak_lr, self.warmup, self.total, self.t = peak_lr, warmup, total, 0

    def step(self, closure=None):
        self.t += 1
        if self.t <= self.warmup:
            lr = self.peak_lr * self.t / self.warmup
        else:
            p = (self.t - self.warmup) / max(1, self.total - self.warmup)
            lr = 0.1 * self.peak_lr + 0.9 * self.peak_lr * 0.5 * (1 + math.cos(math.pi * p))
        for gr in self.param_groups:
            gr["lr"] = lr
        return super().step(closure)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ByteLM()
    steps, B = 160, 16
    trans = torch.softmax(2.5 * torch.randn(V, V, generator=g), -1)
    trans[:, PAD] = 0
    trans = trans / trans.sum(-1, keepdim=True)

    def batch():
        ids = torch.full((B, TMAX + 1), PAD, dtype=torch.long)
        lens = torch.randint(12, TMAX + 1, (B,), generator=g)
        cur = torch.randint(1, V, (B,), generator=g)
        ids[:, 0] = cur
        for t in range(TMAX):
            cur = torch.multinomial(trans[cur], 1, generator=g).squeeze(-1)
            ids[:, t + 1] = torch.where(t + 1 <= lens, cur, torch.full_like(cur, PAD))
        mask = (torch.arange(TMAX)[None] < lens[:, None]).float()
        return (ids[:, :-1], mask), ids[:, 1:]

    batches = [batch() for _ in range(steps)]

    def loss_fn(out, y):
        logits, mask = out
        nll = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), reduction="none").view_as(mask)
        return (nll * mask).sum(1).mean()

    opt = WarmupCosineAdamW(model.parameters(), peak_lr=5e-3, warmup=30, total=steps, weight_decay=0.1)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
