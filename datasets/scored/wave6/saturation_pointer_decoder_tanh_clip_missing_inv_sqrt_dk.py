"""Attention-model pointer decoder (Kool et al.) whose tanh logit clipping saturates.

The encoder is a small post-norm transformer encoder over a set of 2-D points (no position
encoding; it is a set).  The decoder points at one node with the attention-model
compatibility  logits_j = C * tanh(u_j),  u_j = q . k_j / sqrt(d_k),  C = 10.  The code was
ported from a variant that folded 1/sqrt(d_k) into the weight initialisation, but kept
PyTorch's default init, so here u_j = q . k_j is sqrt(d_k) ~ 7 times too large.  The query
projection starts at zero (uniform pointer, loss log(10)), but the unscaled bilinear
compatibility reacts far more strongly to each update (7x larger gradients acting on a 7x
larger product): within the first ~10 momentum-SGD steps every u_j is pushed to +10..+40
and later far beyond, every tanh sits on its upper plateau (tanh' underflows to 0), all
pointer logits equal +C, the distribution over nodes is exactly uniform and no gradient
reaches the decoder or the encoder again.  The loss is pinned at log(10) for the rest of
the run (stall, no NaN).
Fix: restore the 1/sqrt(d_k) inside the tanh (smaller pre-activations); nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "decoder.clip"
SOURCE = ("Kool, van Hoof & Welling, 'Attention, Learn to Solve Routing Problems!' (2019) and "
          "Bello et al. (2016) pointer logit clipping C*tanh(u); u must be scaled by 1/sqrt(d_k) "
          "(common porting slip when the scaling is folded into init in the reference code)")

N_NODES = 10


class TanhClip(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, u):
        return self.c * torch.tanh(u)


class PointerDecoder(nn.Module):
    def __init__(self, d, fixed):
        super().__init__()
        self.fixed = fixed
        self.ctx = nn.Linear(d + 2, d)      # graph embedding + query point -> context
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, d, bias=False)
        self.clip = TanhClip(10.0)
        nn.init.zeros_(self.wq.weight)      # start from a uniform pointer distribution

    def forward(self, h, query):
        ctx = self.ctx(torch.cat([h.mean(1), query], -1))
        q = self.wq(ctx)                       # (B, d)
        k = self.wk(h)                         # (B, N, d)
        u = torch.einsum("bd,bnd->bn", q, k)
        if self.fixed:
            u = u / math.sqrt(k.shape[-1])
        return self.clip(u)


class PointerNet(nn.Module):
    def __init__(self, fixed, d=48):
        super().__init__()
        self.embed = nn.Linear(2, d)
        layer = nn.TransformerEncoderLayer(d, 4, dim_feedforward=96, dropout=0.0,
                                           batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.decoder = PointerDecoder(d, fixed)

    def forward(self, nodes, query):
        h = self.encoder(self.embed(nodes))
        return {"pointer_logits": self.decoder(h, query)}


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PointerNet(fixed)
    steps, bs = 200, 32
    batches = []
    for _ in range(steps):
        nodes = torch.randn(bs, N_NODES, 2, generator=g)
        query = torch.randn(bs, 2, generator=g)
        target = ((nodes - query[:, None]) ** 2).sum(-1).argmin(-1)   # nearest node
        batches.append(((nodes, query), target))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def loss_fn(out, target):
        return F.cross_entropy(out["pointer_logits"], target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
