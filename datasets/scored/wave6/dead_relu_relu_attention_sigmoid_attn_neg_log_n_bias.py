"""ReLU attention that inherited sigmoid attention's -log(n) logit bias: every head is dead.

The encoder uses ReLU attention (Wortsman et al. 2023: weights = relu(q.k/sqrt(d_h) + b) / n
instead of a softmax) with a learnable per-head logit bias b.  The bias init was copied from
the sigmoid-attention recipe (Ramapuram et al. 2024), b = -log(n), which is right for a
sigmoid (it keeps the initial attention mass ~1) but fatal for a ReLU: with LayerNormed
inputs and default init the logits q.k/sqrt(d_h) have std ~0.3, so q.k/sqrt(d_h) - log(17)
~ -2.8 is negative for every query/key pair.  All attention weights are exactly 0 and the
ReLU has zero derivative there, so q, k, b get no gradient; the values and output
projection get none either (they are multiplied by the zero weights).  The attention is
dead in every layer from step 0.  The sequence is read out from the CLS token, which can only
see the other tokens through attention, so the model learns the class prior at best and the
loss sits at the prior entropy (~0.67) for the whole run (stall, no NaN).
Fix: initialise the logit bias at 0 (ReLU-attention recipe); nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "encoder.0.attn.act"
SOURCE = ("Wortsman et al. 2023 'Replacing softmax with ReLU in Vision Transformers' + Ramapuram "
          "et al. 2024 'Theory, Analysis, and Best Practices for Sigmoid Self-Attention' "
          "(b = -log n bias); recipe mixing between attention variants")

V, T = 10, 16
CLS = V


class ReLUAttention(nn.Module):
    def __init__(self, d, h, n_tokens, fixed):
        super().__init__()
        self.h, self.dh, self.n = h, d // h, n_tokens
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.act = nn.ReLU()
        b0 = 0.0 if fixed else -math.log(n_tokens)
        self.logit_bias = nn.Parameter(torch.full((h, 1, 1), b0))

    def forward(self, x):
        B, L, D = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        w = self.act(q @ k.transpose(-1, -2) / math.sqrt(self.dh) + self.logit_bias) / L
        return self.out((w @ v).transpose(1, 2).reshape(B, L, D))


class Block(nn.Module):
    def __init__(self, d, h, n_tokens, fixed):
        super().__init__()
        self.n1, self.attn = nn.LayerNorm(d), ReLUAttention(d, h, n_tokens, fixed)
        self.n2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.ffn(self.n2(x))


class ReLUAttnClassifier(nn.Module):
    def __init__(self, fixed, d=32, h=4, n=2):
        super().__init__()
        self.tok = nn.Embedding(V + 1, d)
        self.pos = nn.Parameter(torch.randn(T + 1, d) * 0.02)
        self.encoder = nn.ModuleList([Block(d, h, T + 1, fixed) for _ in range(n)])
        self.norm = nn.LayerNorm(d)
        self.cls_head = nn.Linear(d, 2)

    def forward(self, ids):
        x = self.tok(ids) + self.pos[: ids.shape[1]]
        for blk in self.encoder:
            x = blk(x)
        return self.cls_head(self.norm(x[:, 0]))


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ReLUAttnClassifier(fixed)
    steps, bs = 200, 32
    batches = []
    for _ in range(steps):
        ids = torch.randint(0, V, (bs, T), generator=g)
        y = ((ids == 1).sum(1) > (ids == 2).sum(1)).long()   # more 1s than 2s?
        ids = torch.cat([torch.full((bs, 1), CLS), ids], 1)
        batches.append((ids, y))
    opt = torch.optim.NAdam(model.parameters(), lr=3e-3)

    def loss_fn(logits, y):
        return F.cross_entropy(logits, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
