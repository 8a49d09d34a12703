"""bad_init: ConvS2S (Gehring et al. 2017) GLU conv encoder-decoder, init std passed as mean.

Mechanism: ConvS2S initialises each GLU convolution with N(0, sqrt(4 (1 - p) / (k d))) so
that the residual stream (x + GLU(conv(x))) * sqrt(0.5) keeps unit variance through depth.
The user wrote `nn.init.normal_(conv.weight, math.sqrt(4 * (1 - p) / (k * d)))`: the second
positional argument of normal_ is the *mean*, so the weights are N(0.1-0.16, 1), ~6-9x too
large and with a common positive offset.  Every encoder block multiplies the activation
scale by ~5-8, the decoder blocks do the same on top of the attention output, so from step 0
the final hidden state is 1e4-1e7 and the loss is 1e4-1e6 instead of ln(V).  Training uses
Nesterov SGD (fairseq's `nag`, here without the gradient clipping); the gradients are as
huge as the activations, the first update throws the weights to inf, and the run is NaN
from the second step on.

ORIGIN: "encoder.convs.0" (the first badly initialised GLU convolution; the blow-up grows
geometrically from there).
Fix: nn.init.normal_(conv.weight, mean=0, std=sqrt(4 (1 - p) / (k d))) - the only change.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder.convs.0"
SOURCE = ("Gehring et al. 2017 'Convolutional Sequence to Sequence Learning' (fairseq fconv: "
          "init std = sqrt(4(1-dropout)/(k*d)), nag optimizer); known pattern: "
          "torch.nn.init.normal_(tensor, mean=0.0, std=1.0) called with the std positionally")

PAD, BOS = 0, 1


def glu_conv(d, k, dropout, fixed):
    conv = nn.Conv1d(d, 2 * d, k)
    std = math.sqrt(4 * (1 - dropout) / (k * d))
    if fixed:
        nn.init.normal_(conv.weight, mean=0.0, std=std)
    else:
        nn.init.normal_(conv.weight, std)            # std lands in the `mean` slot
    nn.init.zeros_(conv.bias)
    return conv


class ConvEncoder(nn.Module):
    def __init__(self, vocab, ctx, emb, d, layers, k, fixed):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.pos = nn.Embedding(ctx, emb)
        self.fc_in = nn.Linear(emb, d)
        self.convs = nn.ModuleList([glu_conv(d, k, 0.1, fixed) for _ in range(layers)])
        self.fc_out = nn.Linear(d, emb)
        self.k = k

    def forward(self, src):
        e = self.embed(src) + self.pos(torch.arange(src.size(1)))
        x = self.fc_in(e).transpose(1, 2)
        for conv in self.convs:
            r = x
            x = F.glu(conv(F.pad(x, ((self.k - 1) // 2, self.k // 2))), dim=1)
            x = (x + r) * math.sqrt(0.5)
        z = self.fc_out(x.transpose(1, 2))
        return z, (z + e) * math.sqrt(0.5)          # keys, values


class ConvDecoder(nn.Module):
    def __init__(self, vocab, ctx, emb, d, layers, k, fixed):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.pos = nn.Embedding(ctx, emb)
        self.fc_in = nn.Linear(emb, d)
        self.convs = nn.ModuleList([glu_conv(d, k, 0.1, fixed) for _ in range(layers)])
        self.att_in = nn.ModuleList([nn.Linear(d, emb) for _ in range(layers)])
        self.att_out = nn.ModuleList([nn.Linear(emb, d) for _ in range(layers)])
        self.fc_out = nn.Linear(d, vocab)
        self.k = k

    def forward(self, tgt_in, keys, values, src_len):
        g = self.embed(tgt_in) + self.pos(torch.arange(tgt_in.size(1)))
        x = self.fc_in(g).transpose(1, 2)
        for conv, a_in, a_out in zip(self.convs, self.att_in, self.att_out):
            r = x
            x = F.glu(conv(F.pad(x, (self.k - 1, 0))), dim=1)           # causal
            h = x.transpose(1, 2)
            q = (a_in(h) + g) * math.sqrt(0.5)
            att = torch.softmax(q @ keys.transpose(1, 2), -1)
            c = att @ values * (src_len * math.sqrt(1.0 / src_len))
            x = ((h + a_out(c)) * math.sqrt(0.5)).transpose(1, 2)
            x = (x + r) * math.sqrt(0.5)
        return self.fc_out(x.transpose(1, 2))


class ConvS2S(nn.Module):
    def __init__(self, vocab, ctx, emb, d, enc_layers, dec_layers, k, fixed):
        super().__init__()
        self.encoder = ConvEncoder(vocab, ctx, emb, d, enc_layers, k, fixed)
        self.decoder = ConvDecoder(vocab, ctx, emb, d, dec_layers, k, fixed)

    def forward(self, src, tgt_in):
        keys, values = self.encoder(src)
        return self.decoder(tgt_in, keys, values, src.size(1))


def nmt_loss(logits, tgt):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1), ignore_index=PAD)


def _pairs(g, n, vocab, L):
    lex = torch.randperm(vocab - 2, generator=g) + 2
    src = torch.randint(2, vocab, (n, L), generator=g)
    tgt = lex[src - 2]
    # local reordering: swap every adjacent pair (like adjective-noun order)
    tgt = tgt.view(n, L // 2, 2).flip(-1).reshape(n, L)
    return src, tgt


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(vocab=30, emb=32, d=64, enc=4, dec=3, k=3, L=10, bs=32, steps=80, lr=0.02),
           dict(vocab=24, emb=32, d=48, enc=6, dec=4, k=3, L=8, bs=24, steps=90, lr=0.01),
           dict(vocab=36, emb=48, d=64, enc=3, dec=3, k=5, L=12, bs=32, steps=70, lr=0.02)][seed % 3]
    model = ConvS2S(cfg["vocab"], cfg["L"] + 1, cfg["emb"], cfg["d"], cfg["enc"], cfg["dec"], cfg["k"], fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, nesterov=True)
    bs = cfg["bs"]
    src, tgt = _pairs(g, cfg["steps"] * bs, cfg["vocab"], cfg["L"])
    batches = []
    for i in range(cfg["steps"]):
        s, t = src[i * bs:(i + 1) * bs], tgt[i * bs:(i + 1) * bs]
        t_in = torch.cat([torch.full((bs, 1), BOS, dtype=torch.long), t[:, :-1]], 1)
        batches.append(((s, t_in), t))
    return dict(model=model, optimizer=opt, loss_fn=nmt_loss, batches=batches, steps=cfg["steps"])
