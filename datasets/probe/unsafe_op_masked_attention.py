"""unsafe_op: key-padding-masked self-attention meets an empty sequence; softmax of all -inf.

Mechanism: a small text classifier (token embedding plus learned positions, one hand-written
multi-head self-attention layer with a residual, a position-wise MLP, masked mean pooling,
linear head) reads padded batches of variable-length token sequences. The attention masks the
padding keys the textbook way, ``scores.masked_fill(pad_mask, float("-inf"))`` before the
softmax, and the pooling is the sentence-transformers masked mean (its denominator clamped, so
it is safe on its own). Training is calm while every sequence has at least one real token: a
padded *query* row still sees real keys. It breaks at the first batch that holds an empty
sequence (a document that preprocessing stripped to zero tokens, kept with length 0 by the
collate function): every key of that row is masked, the softmax of a row of ``-inf`` is
``exp(-inf - (-inf)) = NaN``, the attention output of that sequence is NaN, the pooling's
``NaN * 0`` keeps it, and the loss is NaN on finite inputs and finite weights. Which step holds
the first empty document, the sizes, the lr and the batch depend on the seed.

ORIGIN: ``attn``, the attention module that contains the masked softmax: the NaN is born in its
softmax (a function, not a submodule); its input projection ``attn.qkv`` and everything before
it stay finite, and its output projection ``attn.o`` only carries the NaN on.
Fixed: the same module filling masked scores with ``torch.finfo(dtype).min``, a large negative
*finite* value (what Hugging Face transformers do), so an all-masked row gets a finite uniform
attention that the pooling then zeroes out; nothing else changes.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "attn"
SOURCE = (
    "NaN from softmax over a fully masked row: pytorch/pytorch issues on nn.MultiheadAttention "
    "returning NaN when key_padding_mask masks every key (and nested-tensor fast-path "
    "differences), Hugging Face transformers switching masks from -inf to "
    "torch.finfo(dtype).min; sentence-transformers' clamped masked mean pooling."
)


class MaskedSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, finite_mask: bool) -> None:
        super().__init__()
        self.heads = heads
        self.finite_mask = finite_mask
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        fill = torch.finfo(scores.dtype).min if self.finite_mask else float("-inf")
        scores = scores.masked_fill(pad[:, None, None, :], fill)
        attn = torch.softmax(scores, dim=-1)
        return self.o((attn @ v).transpose(1, 2).reshape(b, n, d))


class TextClassifier(nn.Module):
    def __init__(
        self, vocab: int, max_len: int, dim: int, heads: int, classes: int, finite_mask: bool
    ) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        self.attn = MaskedSelfAttention(dim, heads, finite_mask)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        pad = tokens == 0
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        h = self.tok(tokens) + self.pos(pos)
        h = h + self.attn(h, pad)
        h = h + self.mlp(h)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        pooled = (h * keep).sum(dim=1) / keep.sum(dim=1).clamp_min(1e-9)
        return self.head(pooled)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    dim = rng.choice([16, 32, 48])
    heads = rng.choice([2, 4])
    classes = rng.choice([3, 4])
    vocab = classes * rng.choice([8, 12])
    max_len = rng.choice([12, 16, 20])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([100, 120, 140])
    lr = rng.choice([2e-3, 3e-3])
    empty_step = rng.randrange(int(0.3 * steps), int(0.65 * steps))

    g = torch.Generator().manual_seed(420_000 + seed)
    per_class = (vocab - 1) // classes  # token 0 is padding
    batches = []
    for step in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        lengths = torch.randint(3, max_len + 1, (batch,), generator=g)
        if step == empty_step or (step > empty_step and rng.random() < 0.15):
            lengths[rng.randrange(batch)] = 0  # a document stripped to nothing
        tokens = torch.zeros(batch, max_len, dtype=torch.long)
        for i in range(batch):
            n = int(lengths[i])
            # Topic words of the label's class, mixed with words of any class.
            own = 1 + int(y[i]) * per_class + torch.randint(0, per_class, (n,), generator=g)
            any_ = 1 + torch.randint(0, per_class * classes, (n,), generator=g)
            topical = torch.rand(n, generator=g) < 0.5
            tokens[i, :n] = torch.where(topical, own, any_)
        batches.append((tokens, y))

    torch.manual_seed(seed)
    model = TextClassifier(vocab, max_len, dim, heads, classes, finite_mask=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
