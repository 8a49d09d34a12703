"""LLaMA-style decoder (RMSNorm, RoPE, grouped-query attention, SwiGLU) whose hand-written
RMSNorm follows the paper formula x / sqrt(mean(x^2)) with no epsilon. The token embedding
uses padding_idx=0, so a pad token embeds to an exact zero vector and, with RoPE (no additive
position embedding), reaches layers.0.attn_norm as all zeros: 0/0 = NaN, which attention then
spreads to every position. The first batches are full length; right-padded batches start mid-run.
fixed=True adds eps=1e-6 inside the square root (as in the LLaMA / HF LlamaRMSNorm code).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "layers.0.attn_norm"
SOURCE = ("RMSNorm without eps (Zhang & Sennrich 2019 formula) hitting zero-vector pad embeddings; "
          "known NaN pattern with padding_idx embeddings + RoPE models, fixed by eps as in LlamaRMSNorm")

VOCAB, DIM, N_HEADS, N_KV, T, B = 24, 48, 4, 2, 16, 16


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=0.0):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rope(x, base=10000.0):
    # x: (B, H, T, hd)
    hd = x.shape[-1]
    inv = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    t = torch.arange(x.shape[-2], dtype=torch.float32)
    fr = torch.outer(t, inv)
    cos, sin = fr.cos(), fr.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2)


class GQAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv):
        super().__init__()
        self.h, self.kv, self.hd = n_heads, n_kv, dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.hd, bias=False)
        self.wk = nn.Linear(dim, n_kv * self.hd, bias=False)
        self.wv = nn.Linear(dim, n_kv * self.hd, bias=False)
        self.wo = nn.Linear(n_heads * self.hd, dim, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.wk(x).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.wv(x).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = rope(q), rope(k)
        rep = self.h // self.kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(o.transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.attn_norm = RMSNorm(dim, eps)
        self.attn = GQAttention(dim, N_HEADS, N_KV)
        self.ffn_norm = RMSNorm(dim, eps)
        self.ffn = SwiGLU(dim, 128)

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.ffn(self.ffn_norm(x))


class Decoder(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM, padding_idx=0)
        self.layers = nn.ModuleList([Block(DIM, eps) for _ in range(2)])
        self.norm = RMSNorm(DIM, eps)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, idx):
        x = self.tok(idx)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Decoder(eps=1e-6 if fixed else 0.0)
    # Markov-chain "language" over tokens 1..VOCAB-1 (0 is the pad id)
    trans = torch.softmax(3.0 * torch.randn(VOCAB - 1, VOCAB - 1, generator=g), dim=-1)
    steps = 160
    pad_from = 50 + int(torch.randint(0, 40, (1,), generator=g))
    batches = []
    for s in range(steps):
        seq = torch.empty(B, T + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, VOCAB - 1, (B,), generator=g)
        for t in range(1, T + 1):
            seq[:, t] = torch.multinomial(trans[seq[:, t - 1]], 1, generator=g).squeeze(1)
        seq = seq + 1
        if s >= pad_from:  # variable-length batches, right-padded with the pad id 0
            lens = torch.randint(T // 2, T + 2, (B,), generator=g).clamp(max=T + 1)
            pos = torch.arange(T + 1)[None]
            seq = seq.masked_fill(pos >= lens[:, None], 0)
        batches.append((seq[:, :-1].contiguous(), seq[:, 1:].contiguous()))

    def loss_fn(out, y):
        return F.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1), ignore_index=0)

    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
