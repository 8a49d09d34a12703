"""Healthy: an early-exit transformer encoder (DeeBERT/PABEE-style: a classifier after
every block) for short-text intent classification on padded variable-length batches,
trained with the *sum* of the per-exit cross-entropies, AdamW.

Why a naive monitor might complain, and why it is fine:
- the attention scores of padded keys are set to -inf with ``masked_fill`` before the
  softmax, so the forward pass contains -inf activations on every step; every query still has
  at least one real key, the softmax turns the -inf into exact zeros and nothing non-finite
  ever reaches the pooled features or the loss;
- the pad embedding row (``padding_idx``) and every padded position receive exactly-zero
  gradients, so a part of the embedding gradient is identically zero on every step;
- the loss is a sum over 2-4 exits, so it starts at several times ln(C) and its scale
  changes with the depth drawn by the seed; it drops steadily as the exits learn, with
  the shallow exits plateauing higher than the deep ones.

ORIGIN: None (healthy).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("DeeBERT (Xin et al. 2020) / PABEE (Zhou et al. 2020) early-exit training with a "
          "loss summed over exits; key-padding masks with -inf scores as in "
          "nn.MultiheadAttention")

PAD = 0


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x, pad_mask):
        B, L, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, L, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        scores = scores.masked_fill(pad_mask[:, None, None, :], float("-inf"))
        att = torch.softmax(scores, dim=-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(B, L, D))
        return x + self.ff(self.ln2(x))


class EarlyExitEncoder(nn.Module):
    def __init__(self, vocab, d, heads, depth, L, n_cls):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(L, d) * 0.02)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(depth)])
        self.exits = nn.ModuleList([nn.Sequential(nn.LayerNorm(d), nn.Linear(d, n_cls))
                                    for _ in range(depth)])

    def forward(self, tok):
        pad = tok == PAD
        keep = (~pad).float().unsqueeze(-1)
        x = self.emb(tok) + self.pos
        outs = []
        for blk, ex in zip(self.blocks, self.exits):
            x = blk(x, pad)
            pooled = (x * keep).sum(1) / keep.sum(1)
            outs.append(ex(pooled))
        return torch.stack(outs, 1)                 # (B, n_exits, C)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(18000 + seed)
    vocab, L, n_cls = 64, 24, 6
    d = [48, 32, 48][seed % 3]
    heads = [4, 4, 4][seed % 3]
    depth = [3, 2, 4][seed % 3]
    lr = [1e-3, 2e-3, 7e-4][seed % 3]
    bs = [48, 64, 32][seed % 3]
    steps = 120

    # intent = which of n_cls trigger pairs (a then b, in order) occurs in the utterance
    trig = torch.randint(1, vocab, (n_cls, 2), generator=g)
    batches = []
    for _ in range(steps):
        lens = torch.randint(6, L + 1, (bs,), generator=g)
        tok = torch.randint(1, vocab, (bs, L), generator=g)
        y = torch.randint(0, n_cls, (bs,), generator=g)
        for i in range(bs):
            n = int(lens[i])
            p = int(torch.randint(0, n - 3, (1,), generator=g))
            gap = int(torch.randint(1, 3, (1,), generator=g))
            tok[i, p], tok[i, p + gap] = trig[y[i], 0], trig[y[i], 1]
            tok[i, n:] = PAD
        batches.append((tok, y))

    torch.manual_seed(seed)
    model = EarlyExitEncoder(vocab, d, heads, depth, L, n_cls)

    def loss_fn(out, y):
        n_exit = out.shape[1]
        return sum(F.cross_entropy(out[:, i], y) for i in range(n_exit))

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
