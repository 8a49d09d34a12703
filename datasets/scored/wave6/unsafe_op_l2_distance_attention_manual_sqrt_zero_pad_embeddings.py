"""L2-distance self-attention with a hand-written sqrt; pad tokens give exactly zero distance.

A post-norm encoder classifies variable-length token bags with L2 (distance-based)
self-attention: logits_ij = -||q_i - k_j|| / sqrt(d_h), written by hand as
((q_i - k_j)**2).sum(-1).sqrt().  The pad embedding is the zero vector (padding_idx) and the
q/k projections are bias-free, so in the first (post-norm) layer every pad query and pad key
is exactly 0 and their distance is exactly 0.  Padded keys are masked with masked_fill after
the distance is computed, which hides them in the forward pass but not in backward:
d sqrt(u)/du = 1/(2 sqrt(u)) = inf at u = 0, multiplied by the zero upstream gradient of a
masked entry, is 0 * inf = NaN.  The first 60 batches are full-length (no pads) and train
normally; the first padded batch yields NaN gradients, Adagrad writes NaN into the weights
and the loss is NaN from the next step on.
Fix: sqrt of the clamped squared distance, d2.clamp_min(1e-12).sqrt(); nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "encoder.0.attn"
SOURCE = ("Kim et al. 2021 'The Lipschitz Constant of Self-Attention' (L2 attention) implemented "
          "with a manual Euclidean distance; PyTorch issues on NaN gradient of sqrt/norm at 0 "
          "and masked_fill/where not protecting the backward pass")

V, PAD, T = 20, 0, 16


class L2Attention(nn.Module):
    def __init__(self, d, h, fixed):
        super().__init__()
        self.h, self.dh, self.fixed = h, d // h, fixed
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d)

    def forward(self, x, pad_mask):
        B, L, D = x.shape
        sh = lambda t: t.view(B, L, self.h, self.dh).transpose(1, 2)
        q, k, v = sh(self.q(x)), sh(self.k(x)), sh(self.v(x))
        d2 = ((q[:, :, :, None, :] - k[:, :, None, :, :]) ** 2).sum(-1)
        dist = d2.clamp_min(1e-12).sqrt() if self.fixed else d2.sqrt()
        logits = -dist / math.sqrt(self.dh)
        logits = logits.masked_fill(pad_mask[:, None, None, :], float("-inf"))
        y = (logits.softmax(-1) @ v).transpose(1, 2).reshape(B, L, D)
        return self.o(y)


class PostNormLayer(nn.Module):
    def __init__(self, d, h, fixed):
        super().__init__()
        self.attn = L2Attention(d, h, fixed)
        self.n1 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.n2 = nn.LayerNorm(d)

    def forward(self, x, pad_mask):
        x = self.n1(x + self.attn(x, pad_mask))
        return self.n2(x + self.ffn(x))


class L2AttnEncoder(nn.Module):
    def __init__(self, fixed, d=32, h=4, n=2):
        super().__init__()
        self.emb = nn.Embedding(V, d, padding_idx=PAD)
        self.encoder = nn.ModuleList([PostNormLayer(d, h, fixed) for _ in range(n)])
        self.head = nn.Linear(d, 3)

    def forward(self, ids):
        pad = ids == PAD
        x = self.emb(ids)
        for layer in self.encoder:
            x = layer(x, pad)
        keep = (~pad).unsqueeze(-1).float()
        pooled = (x * keep).sum(1) / keep.sum(1)
        return self.head(pooled)


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = L2AttnEncoder(fixed)
    steps, bs, full_len_steps = 150, 32, 60
    batches = []
    for s in range(steps):
        ids = torch.randint(1, V, (bs, T), generator=g)
        if s >= full_len_steps:                       # variable-length bags from here on
            lens = torch.randint(6, T + 1, (bs,), generator=g)
            ids = ids.masked_fill(torch.arange(T)[None] >= lens[:, None], PAD)
        valid = ids != PAD
        n_low = ((ids >= 1) & (ids <= 6)).sum(1).float() / valid.sum(1)
        y = (n_low > 0.25).long() + (n_low > 0.4).long()   # share of "low" tokens: 3 bins
        batches.append((ids, y))
    opt = torch.optim.Adagrad(model.parameters(), lr=0.03)

    def loss_fn(logits, y):
        return F.cross_entropy(logits, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
