"""CLIP-style dual encoder, hand-written InfoNCE, trained under float16 autocast.

Mechanism
---------
Two towers ("image" features and "text" features of the same underlying item)
are projected and L2-normalised; the logits are ``logit_scale.exp() * img @ txt.T``
with CLIP's learnable temperature initialised at 1/0.07 (scale 14.3).  The
contrastive loss is written by hand, as in many research repos and in MONAI's
ContrastiveLoss: ``e = exp(logits); -log(e.diag() / e.sum(1))``.

Under ``torch.autocast(dtype=float16)`` the similarity matmul returns float16,
the fp32 0-dim scale does not promote it, and ``torch.exp`` keeps float16.
exp(x) passes the float16 maximum 65504 as soon as x > ln(65504) = 11.09,
i.e. as soon as any pair reaches cosine similarity 0.776 at the initial
temperature.  At initialisation the towers are unrelated (cosines near 0),
so the run is perfectly calm for tens of steps; as the positives align the
first positive logit crosses 11.09, ``exp`` gives +inf, inf/inf = NaN and the
loss is NaN.  The same code in fp32 never overflows (exp overflows at 88.7 and
the logits are bounded by the scale, ~15).

Fix
---
Run the overflowing op in float32: upcast the logits before the exp/sum
(equivalently use F.cross_entropy, which autocast already runs in fp32, or
train in bfloat16).  ``fixed=True`` only adds ``logits.float()`` in the loss.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None   # the overflowing exp lives in the hand-written loss, not in a module
SOURCE = ("Hand-written InfoNCE / NT-Xent with torch.exp(sim/temperature) under fp16 AMP "
          "(huggingface/sentence-transformers#2774 on exp(s/tau) overflow in a manual contrastive loss; "
          "Lightning-Universe/lightning-bolts#811 nt_xent overflow at low temperature; MONAI ContrastiveLoss "
          "manual exp); CLIP (Radford et al. 2021) learnable temperature initialised at 0.07")


class Tower(nn.Module):
    def __init__(self, din, hidden, dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(din, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return F.normalize(self.proj(self.mlp(x)), dim=-1)


class DualEncoder(nn.Module):
    def __init__(self, d_img, d_txt, hidden, dim):
        super().__init__()
        self.image_tower = Tower(d_img, hidden, dim)
        self.text_tower = Tower(d_txt, hidden, dim)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, img, txt):
        return self.logit_scale.exp() * self.image_tower(img) @ self.text_tower(txt).t()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    lr = [3e-4, 4e-4, 5e-4][seed % 3]
    d_img, d_txt, batch, k, noise, steps = 64, 40, 64, 12, 0.7, 300
    mix_img = torch.randn(k, d_img, generator=g) / math.sqrt(k)
    mix_txt = torch.randn(k, d_txt, generator=g) / math.sqrt(k)
    batches = []
    for _ in range(steps):
        z = torch.randn(batch, k, generator=g)               # the shared "concept" of each pair
        img = torch.tanh(z @ mix_img) + noise * torch.randn(batch, d_img, generator=g)
        txt = z @ mix_txt + noise * torch.randn(batch, d_txt, generator=g)
        batches.append(((img, txt), torch.arange(batch)))
    model = DualEncoder(d_img, d_txt, 128, 64)

    def loss_fn(logits, target):
        if fixed:
            logits = logits.float()                          # exp/sum in fp32
        e = torch.exp(logits)
        pos = e.diagonal()
        loss_i = -torch.log(pos / e.sum(1)).mean()
        loss_t = -torch.log(pos / e.sum(0)).mean()
        return 0.5 * (loss_i + loss_t)

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
