"""Byte-level (tokeniser-free, CANINE/ByT5-flavoured) Transformer encoder used as a word/char
segmenter-tagger: byte embeddings + learned positions -> post-LN nn.TransformerEncoder -> per-byte
tags (word-start, word-internal lower/upper, digit, space, punctuation); cross-entropy; Adam with
lr 0.2..0.3 (a Adafactor-style relative step size pasted into Adam) and no warmup.

Mechanism: post-LN Transformers need warmup and a small peak lr; at 0.2+ from step 0 Adam moves
every weight by ~lr per step (update/weight ratios ~1), the embedding, attention and FFN
weights are scrambled in the first steps, the LayerNorms then see near-constant inputs and the
model falls back to the tag prior, where it bounces without making progress.
ORIGIN: None -- an optimiser setting.
Fix: lr 3e-3 (same Adam, same data); no other change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Xiong et al. 2020 'On Layer Normalization in the Transformer Architecture' (post-LN "
          "needs warmup); HF/fairseq issues on byte models diverging without warmup")


class ByteTagger(nn.Module):
    def __init__(self, d, layers, T, n_tags):
        super().__init__()
        self.emb = nn.Embedding(256, d)
        self.pos = nn.Parameter(torch.randn(T, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.out = nn.Linear(d, n_tags)

    def forward(self, x):
        return self.out(self.enc(self.emb(x) + self.pos[: x.shape[1]]))


def _batch(g, bs, T):
    alph = torch.tensor([32] * 5 + list(range(97, 109)) + list(range(65, 71)) + list(range(48, 53)) + [44, 46])
    x = alph[torch.randint(0, len(alph), (bs, T), generator=g)]
    low = (x >= 97) & (x <= 122)
    up = (x >= 65) & (x <= 90)
    dig = (x >= 48) & (x <= 57)
    sp = x == 32
    prev_sp = torch.cat([torch.ones(bs, 1, dtype=torch.bool), sp[:, :-1]], 1)
    y = torch.full((bs, T), 5)                      # punctuation
    y[low] = 0
    y[up] = 1
    y[dig] = 2
    y[sp] = 3
    y[(low | up) & prev_sp] = 4                     # word start
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    d, layers, bs, lr_bad = [(32, 2, 8, 0.2), (32, 3, 6, 0.3), (24, 2, 10, 0.25)][seed % 3]
    lr = 3e-3 if fixed else lr_bad
    T = 24
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11000 + seed)
    model = ByteTagger(d, layers, T, 6)
    steps = 60
    batches = [_batch(g, bs, T) for _ in range(steps)]
    # BERT-style head init: small weights (std 0.02), bias at the log tag prior
    prior = torch.bincount(batches[0][1].flatten(), minlength=6).float() + 1.0
    with torch.no_grad():
        nn.init.normal_(model.out.weight, std=0.02)
        model.out.bias.copy_((prior / prior.sum()).log())
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
