"""Captioning decoder trained on cached encoder features; one cached row is +inf.

A small transformer decoder (causal self-attention + cross-attention + FFN, post-norm)
writes a 5-token caption for an image represented by 16 cached patch features.  The features
were extracted once by a frozen encoder running in fp16 and cached; for one image the fp16
extraction overflowed and its cached feature tensor holds +inf entries.  Training is
perfectly healthy until that image is drawn (step 140): feat_proj turns the row into
inf/NaN keys and values, the cross-attention softmax produces NaN, the loss is NaN, Adam
writes NaN into every weight and the run never recovers.
Fix: drop the corrupt row from that batch (filter non-finite cached features); nothing else.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "feat_proj"
SOURCE = ("Cached fp16 feature extraction producing inf/NaN for a few images (e.g. BLIP/CLIP "
          "feature caches, 'loss becomes nan after N iterations' captioning reports traced to "
          "one corrupt feature file)")

N_OBJ, PATCH, FEAT = 12, 16, 24
BOS, EOS = N_OBJ, N_OBJ + 1
VOCAB = N_OBJ + 2
CAP = 5          # BOS o1 o2 o3 EOS


class Captioner(nn.Module):
    def __init__(self, d=32, h=4):
        super().__init__()
        self.feat_proj = nn.Linear(FEAT, d)
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Parameter(torch.randn(CAP, d) * 0.1)
        self.self_attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.norm1 = nn.LayerNorm(d)
        self.cross_attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.norm2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm3 = nn.LayerNorm(d)
        self.out = nn.Linear(d, VOCAB)
        self.register_buffer("causal", torch.triu(torch.ones(CAP - 1, CAP - 1), 1).bool())

    def forward(self, feats, tok_in):
        mem = self.feat_proj(feats)
        L = tok_in.shape[1]
        x = self.tok(tok_in) + self.pos[:L]
        x = self.norm1(x + self.self_attn(x, x, x, attn_mask=self.causal[:L, :L])[0])
        x = self.norm2(x + self.cross_attn(x, mem, mem)[0])
        x = self.norm3(x + self.ffn(x))
        return self.out(x)


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Captioner()
    protos = torch.randn(N_OBJ, FEAT, generator=g)
    steps, bs, bad_step = 200, 24, 140
    batches = []
    for s in range(steps):
        feats = 0.3 * torch.randn(bs, PATCH, FEAT, generator=g)           # background patches
        objs = torch.stack([torch.randperm(N_OBJ, generator=g)[:3] for _ in range(bs)])
        where = torch.stack([torch.randperm(PATCH, generator=g)[:3].sort().values
                             for _ in range(bs)])
        for b in range(bs):
            feats[b, where[b]] += protos[objs[b]]
        caps = torch.cat([torch.full((bs, 1), BOS), objs, torch.full((bs, 1), EOS)], 1)
        if s == bad_step:
            feats[5, 3:9] = float("inf")        # overflowed fp16 cache entry
            if fixed:                           # filter the non-finite row
                keep = torch.isfinite(feats).flatten(1).all(1)
                feats, caps = feats[keep], caps[keep]
        batches.append(((feats, caps[:, :-1]), caps[:, 1:]))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    def loss_fn(logits, tgt):
        return F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
