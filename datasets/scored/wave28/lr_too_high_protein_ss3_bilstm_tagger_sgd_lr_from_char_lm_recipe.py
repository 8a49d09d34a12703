"""Protein secondary-structure (3-state: helix / strand / coil) tagger: residue embedding
-> 1-2 layer bidirectional LSTM -> per-residue linear head, token cross-entropy, plain SGD
without gradient clipping.

Mechanism (lr_too_high): the optimiser settings were taken from a character-level LSTM
language-model recipe (SGD, lr = 20, as in the PyTorch word_language_model example) but the
`clip_grad_norm_(0.25)` that makes that lr survivable was not carried over. The updates are
orders of magnitude larger than the weights (update/weight ratios >> 1e-3): the LSTM gates
and the head's logits are thrown into saturation after a few steps, the per-residue logits
become huge and the loss jumps far above its starting value and never settles (it may also
overflow to inf/NaN).

ORIGIN: None - no single module starts it; the step size is wrong for every parameter.

Fix: lr = 0.5 (the same SGD, no other change).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("pytorch/examples word_language_model (SGD lr=20 with clip 0.25) reused without "
          "the clipping; DSSP 3-state secondary-structure taggers with BiLSTMs "
          "(e.g. NetSurfP-2.0); cs231n 'update/weight ratio ~1e-3' guideline")

AA = 20


class SSTagger(nn.Module):
    def __init__(self, emb, hid, layers):
        super().__init__()
        self.emb = nn.Embedding(AA, emb)
        self.lstm = nn.LSTM(emb, hid, num_layers=layers, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hid, 3)

    def forward(self, x):
        h, _ = self.lstm(self.emb(x))
        return self.head(h).transpose(1, 2)       # (B, 3, L)


# helix formers (A E L M Q K R), strand formers (V I Y F W T), breakers (G P N D S)
_HELIX = [0, 3, 9, 10, 13, 8, 14]
_STRAND = [17, 7, 19, 4, 18, 16]
_COIL = [5, 12, 11, 2, 15]


def _batch(g, bs, L):
    x = torch.empty(bs, L, dtype=torch.long)
    y = torch.empty(bs, L, dtype=torch.long)
    for i in range(bs):
        p = 0
        while p < L:
            s = int(torch.randint(0, 3, (1,), generator=g))
            seg = int(torch.randint(4, 12, (1,), generator=g))
            pool = [_HELIX, _STRAND, _COIL][s]
            for j in range(p, min(L, p + seg)):
                if torch.rand(1, generator=g) < 0.75:
                    x[i, j] = pool[int(torch.randint(0, len(pool), (1,), generator=g))]
                else:
                    x[i, j] = int(torch.randint(0, AA, (1,), generator=g))
                y[i, j] = s
            p += seg
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8000 + seed)
    emb = [16, 24, 32][seed % 3]
    hid = [32, 48, 24][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [16, 24, 32][seed % 3]
    lr = [20.0, 15.0, 30.0][seed % 3]
    if fixed:
        lr = 0.5
    steps = 100
    L = 40

    model = SSTagger(emb, hid, layers)
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def loss_fn(out, y):
        return F.cross_entropy(out, y)

    batches = [_batch(g, bs, L) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
