"""HEALTHY - variable-misuse localisation (Allamanis et al. / Vasic et al.
"joint localisation and repair" style): a small pre-LN Transformer encoder
reads a tokenised function; a pointer head scores every position, positions
that are not identifier uses are masked with -inf, and the log-softmax over
the remaining candidates (plus slot 0 = "no bug") is trained with NLL on
the index of the misused variable.

Why a naive monitor may flag it: the masked logits are literally -inf, and
so are most entries of the log-softmax output (and the probabilities there
are exactly 0), in every batch; the gradient of every masked position is
exactly 0; batches mix buggy and clean functions so the target is often the
"no bug" slot.  None of this reaches the loss: each target index is always
an unmasked candidate, ``log_softmax`` handles -inf entries exactly, and
``nll_loss`` only gathers the finite target entries.  The model learns to
find the use of an identifier that is not a parameter of the function.

ORIGIN: None (healthy).
"""
import random

import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("VarMisuse localisation with pointer networks (Allamanis et al. ICLR 2018; Vasic et al. "
          "ICLR 2019; Hellendoorn et al. ICLR 2020 'Global relational models of source code'); "
          "masked_fill(-inf) + log_softmax pointer heads")

KW = ["<pad>", "<nobug>", "def", "(", ")", ",", ":", "=", "+", "return", "if", "<", "\n"]
N_ID = 20
V = len(KW) + N_ID
ID0 = len(KW)
SEQ = 40


def _function(rng):
    params = rng.sample(range(N_ID), 3)
    toks = [1, 2, ID0 + rng.randrange(N_ID), 3]
    for i, p in enumerate(params):
        toks += [ID0 + p] + ([5] if i < 2 else [])
    toks += [4, 6, 12]
    cand = []
    while len(toks) < SEQ - 6:
        a, b, c = (rng.choice(params) for _ in range(3))
        start = len(toks)
        toks += [ID0 + a, 7, ID0 + b, 8, ID0 + c, 12]
        cand += [start, start + 2, start + 4]
    toks = toks[:SEQ]
    cand = [c for c in cand if c < SEQ]
    target = 0
    if rng.random() < 0.6:                      # inject a misuse: a non-parameter identifier
        target = rng.choice(cand)
        others = [i for i in range(N_ID) if i not in params]
        toks[target] = ID0 + rng.choice(others)
    toks += [0] * (SEQ - len(toks))
    mask = torch.zeros(SEQ, dtype=torch.bool)
    mask[0] = True
    mask[cand] = True
    return toks, mask, target


class VarMisusePointer(nn.Module):
    def __init__(self, d, layers):
        super().__init__()
        self.tok = nn.Embedding(V, d)
        self.pos = nn.Embedding(SEQ, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pointer = nn.Linear(d, 1)

    def forward(self, toks, cand_mask):
        h = self.tok(toks) + self.pos(torch.arange(toks.shape[1]))
        h = self.encoder(h, src_key_padding_mask=toks.eq(0))
        logits = self.pointer(h).squeeze(-1).masked_fill(~cand_mask, float("-inf"))
        return torch.log_softmax(logits, dim=-1)


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    d = r.choice([48, 64])
    layers = r.choice([2, 3])
    lr = r.choice([2e-3, 3e-3])
    bs = r.choice([32, 40])
    steps = r.choice([160, 180, 200])

    drng = random.Random(18000 + seed)
    batches = []
    for _ in range(steps):
        rows = [_function(drng) for _ in range(bs)]
        toks = torch.tensor([t for t, _, _ in rows])
        mask = torch.stack([m for _, m, _ in rows])
        tgt = torch.tensor([y for _, _, y in rows])
        batches.append(((toks, mask), tgt))

    torch.manual_seed(seed)
    model = VarMisusePointer(d, layers)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.NLLLoss(), batches=batches, steps=steps)
