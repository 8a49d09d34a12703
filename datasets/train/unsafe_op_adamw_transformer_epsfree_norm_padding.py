"""unsafe_op: an eps-free RMS norm in a small AdamW transformer meets the first padded batch.

Mechanism: a pre-norm transformer classifier (token embedding with `padding_idx`, learned
positions masked at padding, two attention + MLP blocks, mean pooling over real tokens), GPT-style
init (normal, std 0.02) and AdamW at 1e-3 to 3e-3 without warmup, the usual small-transformer
recipe. Its norm is written by hand without an epsilon: `x / sqrt(mean(x^2))`. For the first part
of the run the loader yields fixed-length sequences and training is calm (the loss falls). At a
seed-dependent step (55-110) it switches to length-bucketed batches with padding; a padding
position's hidden state is exactly zero (zero embedding row, masked position), so its norm is
0 / sqrt(0) = NaN in the first block's norm, and the NaN spreads through attention into every
position and the loss at that step, on finite, ordinary inputs.

With std-0.02 weights, AdamW's first step moves every weight by about lr (its first update is
lr * sign(g)), a large fraction of the weights: a high first update-to-weight ratio, as in most
transformer runs without warmup, which is not what fails here.

ORIGIN: ``blocks.0.norm1``, the parameter-free norm module where the first non-finite value is
produced (its input, the zero row, is finite).
Fixed: the same norm with the epsilon inside the root, sqrt(mean(x^2) + 1e-6) (a zero row then
stays zero and is ignored by the masks); data, model and optimizer unchanged.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

CAUSE = "unsafe_op"
ORIGIN = "blocks.0.norm1"
SOURCE = ("hand-written RMSNorm / ScaleNorm without eps (x * rsqrt(x.pow(2).mean(-1))) in small "
          "transformer re-implementations; NaN reports when padded batches give all-zero rows "
          "(torch.nn.RMSNorm and T5's LayerNorm add eps inside the root for this reason)")

PAD, VOCAB = 0, 24


class RMSScale(nn.Module):
    """Scale each row to unit RMS (no weights). `eps=0` is the bug."""

    def __init__(self, eps: float) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class Block(nn.Module):
    def __init__(self, d: int, heads: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = RMSScale(eps)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = RMSScale(eps)
        self.fc1 = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, h: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        b, t, d = h.shape
        q, k, v = self.qkv(self.norm1(h)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
        scores = scores.masked_fill(~keep[:, None, None, :], -1e9)  # no padded keys
        att = torch.softmax(scores, dim=-1) @ v
        h = h + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return h + self.fc2(self.act(self.fc1(self.norm2(h))))


class Classifier(nn.Module):
    def __init__(self, d: int, depth: int, heads: int, max_len: int, eps: float) -> None:
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList([Block(d, heads, eps) for _ in range(depth)])
        self.norm_f = RMSScale(eps)
        self.head = nn.Linear(d, 2)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        keep = ids != PAD
        positions = torch.arange(ids.shape[1], device=ids.device)
        h = self.tok(ids) + self.pos(positions)[None] * keep[..., None]  # pads stay zero
        for blk in self.blocks:
            h = blk(h, keep)
        h = self.norm_f(h)
        pooled = (h * keep[..., None]).sum(1) / keep.sum(1, keepdim=True)
        return self.head(pooled)


def _gpt_init(model: nn.Module) -> None:
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)
        if isinstance(m, nn.Embedding) and m.padding_idx is not None:
            with torch.no_grad():
                m.weight[m.padding_idx].zero_()


def _batch(g: torch.Generator, n: int, length: int, padded: bool
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """Label: does token 1 occur more often than token 2 (ties broken to 0)."""
    ids = torch.randint(1, VOCAB, (n, length), generator=g)
    if padded:  # length-bucketed batch: each row keeps a random prefix, the rest is padding
        lengths = torch.randint(length // 3, length, (n,), generator=g)
        ids[torch.arange(length)[None, :] >= lengths[:, None]] = PAD
    y = ((ids == 1).sum(1) > (ids == 2).sum(1)).long()
    return ids, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    d = (32, 48, 64)[seed % 3]
    depth = (2, 2, 2)[seed % 3]
    lr = (3e-3, 2.5e-3, 2e-3)[seed % 3]
    length = (16, 20, 24)[seed % 3]
    switch = 55 + (seed * 23) % 56
    steps = switch + 60
    model = Classifier(d, depth, 4, length, eps=1e-6 if fixed else 0.0)
    _gpt_init(model)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    g = torch.Generator().manual_seed(1000 + seed)
    batches = [_batch(g, 32, length, padded=i >= switch) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
