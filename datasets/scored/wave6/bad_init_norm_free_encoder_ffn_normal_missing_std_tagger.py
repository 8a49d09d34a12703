"""Norm-free (LayerNorm-less) encoder whose FFN init forgot the std argument.

A T-Fixup style encoder tagger: no LayerNorm anywhere, stability comes only from the
initialisation (Xavier, residual-branch weights scaled by 0.67 * N**-0.25).  The FFN module
carries its own reset helper that was meant to be  nn.init.normal_(w, std=0.02)  but was
written  nn.init.normal_(w)  - std 1.  Every FFN branch then multiplies the residual stream
by ~sqrt(fan_in) (x8 for the first matrix, x8 for the second after the ReLU), so with no
normalisation to reset the scale the activations grow geometrically, ~30-40x per block,
from the very first forward (residual-stream RMS 0.25 -> 8 -> 3e2 -> 1e4 -> 4e5 -> 1e7):
the first loss is ~1e6, the first gradients are astronomically large and the first momentum
SGD step throws the weights to inf - the loss is NaN from step 1 on.
Fix: nn.init.normal_(w, std=0.02) in the FFN helper; nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "blocks.0.ffn"
SOURCE = ("Huang et al. 2020 T-Fixup (LayerNorm-free transformer relies on init scaling) + the "
          "classic nn.init.normal_(w) without std (default std=1) slip in GPT-style "
          "_init_weights helpers")

V, T, NTAG, N_LAYERS = 32, 12, 4, 5


class FFN(nn.Module):
    def __init__(self, d, fixed):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        for fc in (self.fc1, self.fc2):
            if fixed:
                nn.init.normal_(fc.weight, std=0.02)
            else:
                nn.init.normal_(fc.weight)          # meant std=0.02
            nn.init.zeros_(fc.bias)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Attn(nn.Module):
    def __init__(self, d, h, scale):
        super().__init__()
        self.h, self.dh = h, d // h
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        for lin in (self.qkv, self.out):
            nn.init.xavier_uniform_(lin.weight)
            nn.init.zeros_(lin.bias)
        with torch.no_grad():          # T-Fixup: scale value and output projections
            self.qkv.weight[2 * d:] *= scale
            self.out.weight *= scale

    def forward(self, x):
        B, L, D = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-1, -2) / math.sqrt(self.dh)).softmax(-1)
        return self.out((a @ v).transpose(1, 2).reshape(B, L, D))


class Block(nn.Module):
    def __init__(self, d, h, scale, fixed):
        super().__init__()
        self.attn = Attn(d, h, scale)
        self.ffn = FFN(d, fixed)

    def forward(self, x):
        x = x + self.attn(x)
        return x + self.ffn(x)


class NormFreeTagger(nn.Module):
    def __init__(self, fixed, d=32, h=4):
        super().__init__()
        scale = 0.67 * N_LAYERS ** -0.25
        self.tok = nn.Embedding(V, d)
        self.pos = nn.Embedding(T, d)
        nn.init.normal_(self.tok.weight, std=d ** -0.5)
        nn.init.normal_(self.pos.weight, std=d ** -0.5)
        self.blocks = nn.ModuleList([Block(d, h, scale, fixed) for _ in range(N_LAYERS)])
        self.head = nn.Linear(d, NTAG)

    def forward(self, ids):
        x = self.tok(ids) + self.pos.weight[: ids.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = NormFreeTagger(fixed)
    steps, bs = 200, 32
    batches = []
    for _ in range(steps):
        ids = torch.randint(0, V, (bs, T), generator=g)
        shift = (ids[:, :1] >= V // 2).long()             # sequence-level switch at position 0
        tags = (ids % NTAG + shift) % NTAG
        batches.append((ids, tags))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def loss_fn(logits, tags):
        return F.cross_entropy(logits.reshape(-1, NTAG), tags.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
