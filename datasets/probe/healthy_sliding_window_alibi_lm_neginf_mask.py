"""Healthy hard negative: tiny Mistral-style sliding-window causal LM with ALiBi biases and tied embeddings.

Looks alarming: every attention score tensor is full of -inf (causal + sliding-window masked_fill),
the ALiBi bias reaches large negative values, the untied-looking output layer shares the embedding
matrix, and one mid-run batch comes from a different text source, giving a sharp but benign loss
spike. Every query row always keeps its own key, so the softmax is finite and the model trains
normally (loss falls from log(48) to ~1). fixed=True is the identical run (nothing to fix).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Press et al. 2022 'ALiBi' (ofirpress/attention_with_linear_biases) and Mistral-7B sliding-window "
          "attention (mistral-src masks with -inf via masked_fill); tied input/output embeddings as in GPT-2")

VOCAB, D, H, WINDOW, T = 48, 64, 4, 8, 32


def _alibi_slopes(n_heads):
    start = 2 ** (-8.0 / n_heads)
    return torch.tensor([start ** (i + 1) for i in range(n_heads)])


class SlidingWindowAttention(nn.Module):
    def __init__(self, d, h, window):
        super().__init__()
        self.h, self.window = h, window
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.register_buffer("slopes", _alibi_slopes(h).view(1, h, 1, 1))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
        pos = torch.arange(t, device=x.device)
        dist = pos[:, None] - pos[None, :]                       # i - j
        scores = scores - self.slopes * dist.clamp(min=0).float()  # ALiBi linear bias
        mask = (dist < 0) | (dist >= self.window)                # causal + sliding window
        scores = scores.masked_fill(mask, float("-inf"))
        attn = scores.softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = SlidingWindowAttention(D, H, WINDOW)
        self.ln2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class SlidingALiBiLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.ln_f = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, VOCAB, bias=False)
        self.lm_head.weight = self.tok.weight                    # weight tying
        nn.init.normal_(self.tok.weight, std=0.02)

    def forward(self, idx):
        x = self.tok(idx)                                        # no position embedding: ALiBi
        for blk in self.blocks:
            x = blk(x)
        return self.lm_head(self.ln_f(x))


def _lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def _markov_source(g):
    # second-order source: next token set by the previous token and the class (t-2 mod 4) of the
    # one before it (80%), or uniform noise (20%)
    return torch.randint(0, VOCAB, (4, VOCAB), generator=g)


def _sample(g, table, bs, noise=0.2):
    seq = torch.empty(bs, T + 1, dtype=torch.long)
    seq[:, :2] = torch.randint(0, VOCAB, (bs, 2), generator=g)
    for t in range(2, T + 1):
        det = table[seq[:, t - 2] % 4, seq[:, t - 1]]
        rnd = torch.randint(0, VOCAB, (bs,), generator=g)
        seq[:, t] = torch.where(torch.rand(bs, generator=g) < noise, rnd, det)
    return seq[:, :-1], seq[:, 1:]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SlidingALiBiLM()
    table, other = _markov_source(g), _markov_source(g)
    steps, bs = 160, 32
    batches = []
    for s in range(steps):
        src = other if s == steps // 2 else table                # one batch from another corpus
        batches.append(_sample(g, src, bs))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1, betas=(0.9, 0.95))
    return dict(model=model, optimizer=opt, loss_fn=_lm_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
