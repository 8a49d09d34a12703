"""GQA + RoPE decoder LM whose attention applies a hand-written QK-norm (q / q.norm()) without eps.
Pad tokens use nn.Embedding(padding_idx=0) -> an exact zero residual, the pre-norm RMSNorm keeps it 0
and the bias-free q/k projections give q = k = 0, so 0/0 = NaN at pad positions. The first batches are
full-length; the first right-padded batch (shorter documents) arrives mid-run and the loss turns NaN.
fixed=True: the QK-norm divides by norm.clamp_min(eps) (what F.normalize does); nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "blocks.0.attn"
SOURCE = ("QK-norm / cosine attention (Henry et al. 2020, nGPT 2024, OLMo-2 style qk-norm) written as "
          "x / x.norm(dim=-1, keepdim=True) without eps; NaN on all-zero pad-token vectors, a recurring "
          "report for hand-rolled l2norm vs F.normalize(eps=...)")

V, D, H, KVH, T = 48, 48, 4, 2, 16


def rope(x, pos):
    hd = x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    ang = pos[:, None].float() * inv[None, :]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class GQAttention(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.hd = D // H
        self.q_proj = nn.Linear(D, H * self.hd, bias=False)
        self.k_proj = nn.Linear(D, KVH * self.hd, bias=False)
        self.v_proj = nn.Linear(D, KVH * self.hd, bias=False)
        self.o_proj = nn.Linear(H * self.hd, D, bias=False)
        self.qk_scale = nn.Parameter(torch.tensor(math.log(10.0)))
        self.fixed = fixed

    def l2norm(self, x):
        n = x.norm(dim=-1, keepdim=True)
        if self.fixed:
            n = n.clamp_min(1e-6)
        return x / n

    def forward(self, x, mask):
        B, L, _ = x.shape
        pos = torch.arange(L)
        q = self.q_proj(x).view(B, L, H, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, L, KVH, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, L, KVH, self.hd).transpose(1, 2)
        q, k = self.l2norm(q), self.l2norm(k)
        q, k = rope(q, pos), rope(k, pos)
        rep = H // KVH
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        s = (q @ k.transpose(-1, -2)) * self.qk_scale.exp()
        s = s.masked_fill(~mask[:, None], float("-inf"))
        a = s.softmax(-1)
        o = (a @ v).transpose(1, 2).reshape(B, L, D)
        return self.o_proj(o)


class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D, 2 * D, bias=False)
        self.up = nn.Linear(D, 2 * D, bias=False)
        self.down = nn.Linear(2 * D, D, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.norm1 = RMSNorm(D)
        self.attn = GQAttention(fixed)
        self.norm2 = RMSNorm(D)
        self.mlp = SwiGLU()

    def forward(self, x, mask):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.mlp(self.norm2(x))


class LM(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.embed = nn.Embedding(V, D, padding_idx=0)
        self.blocks = nn.ModuleList([Block(fixed) for _ in range(2)])
        self.norm = RMSNorm(D)
        self.lm_head = nn.Linear(D, V, bias=False)

    def forward(self, ids):
        L = ids.shape[1]
        causal = torch.tril(torch.ones(L, L, dtype=torch.bool))
        keep = ids != 0
        # key mask: causal and key is not pad; a pad query still sees itself to keep rows non-empty
        mask = causal[None] & (keep[:, None, :] | torch.eye(L, dtype=torch.bool)[None])
        x = self.embed(ids)
        for b in self.blocks:
            x = b(x, mask)
        return self.lm_head(self.norm(x))


def make_batches(seed, steps, B=16):
    g = torch.Generator().manual_seed(seed)
    # a toy "language": token t+1 follows t with high prob (mod V-1), ids 1..V-1
    first_pad = int(steps * (0.45 + 0.1 * torch.rand(1, generator=g).item()))
    batches = []
    for s in range(steps):
        start = torch.randint(1, V, (B, 1), generator=g)
        jumps = (torch.rand(B, T + 1, generator=g) < 0.15).long() * torch.randint(1, V - 1, (B, T + 1), generator=g)
        seq = (start - 1 + torch.cumsum(1 + jumps, dim=1)) % (V - 1) + 1
        if s >= first_pad and s % 3 == first_pad % 3:
            lengths = torch.randint(T // 2, T + 1, (B,), generator=g)
            lengths[0] = T // 2
            ar = torch.arange(T + 1)[None]
            seq = torch.where(ar <= lengths[:, None], seq, torch.zeros_like(seq))
        x, y = seq[:, :-1].clone(), seq[:, 1:].clone()
        y[x == 0] = -100
        y[y == 0] = -100
        batches.append((x, y))
    return batches


def loss_fn(out, y):
    return F.cross_entropy(out.reshape(-1, V), y.reshape(-1), ignore_index=-100)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = LM(fixed)
    steps = 120
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=make_batches(seed, steps),
                steps=steps, amp_dtype=None, scaler=None)
