"""Name-based bug detection (DeepBugs-style swapped-argument detector): a
small post-LN Transformer encoder reads the tokens of a call site with some
surrounding context, a [CLS] vector is classified as "arguments in the
correct order" vs "arguments swapped".  Trained with AdamW at lr 3e-2..5e-2
and no warmup.

Mechanism: the reference recipe trains this encoder with a linear warmup to
2e-3; the re-implementation dropped the warmup and raised the lr because "the
model is tiny".  Post-LN Transformers are the textbook case that needs
warmup: AdamW moves every weight by ~lr per step from the first step
(update/weight ratios ~1e-1 instead of ~1e-3), the attention logits and the
residual stream are thrown around, and the network falls back to the only
solution that survives such noise - ignoring the input and predicting the
class prior.  For balanced data that is log(2), the loss it started from: it
oscillates around it for the whole run while the fixed run learns which
argument names belong first for each callee.  A stall, no non-finite value.

ORIGIN: None - an optimiser setting; every layer's update/weight ratio is far
above ~1e-3, no single module starts it.

Fix: lr 2e-3 with the same AdamW, model, data and steps.
"""
import random

import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("DeepBugs (Pradel & Sen, OOPSLA 2018) swapped-argument bug detection; Xiong et al. 2020 "
          "'On Layer Normalization in the Transformer Architecture' and Liu et al. 2020 on post-LN "
          "Transformers needing warmup (large lr without warmup collapses training)")

N_CALLEE = 12
N_NAME = 48        # argument identifier names
N_CTX = 24         # other context tokens (keywords, punctuation)
PAD, CLS, LP, COMMA, RP = 0, 1, 2, 3, 4
BASE = 5
V = BASE + N_CALLEE + N_NAME + N_CTX
SEQ = 20


def _call_site(rng, first, second):
    f = rng.randrange(N_CALLEE)
    a = rng.choice(first[f])
    b = rng.choice(second[f])
    swapped = rng.random() < 0.5
    if swapped:
        a, b = b, a
    pre = [BASE + N_CALLEE + N_NAME + rng.randrange(N_CTX) for _ in range(rng.randint(2, 6))]
    call = [BASE + f, LP, BASE + N_CALLEE + a, COMMA, BASE + N_CALLEE + b, RP]
    post = [BASE + N_CALLEE + N_NAME + rng.randrange(N_CTX) for _ in range(rng.randint(1, 4))]
    toks = ([CLS] + pre + call + post)[:SEQ]
    toks += [PAD] * (SEQ - len(toks))
    return toks, int(swapped)


class BugDetector(nn.Module):
    def __init__(self, d, heads, layers):
        super().__init__()
        self.tok = nn.Embedding(V, d)
        self.pos = nn.Embedding(SEQ, d)
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True,
                                           norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.cls_head = nn.Linear(d, 2)
        nn.init.normal_(self.cls_head.weight, std=0.02)     # BERT-style initializer_range
        nn.init.zeros_(self.cls_head.bias)

    def forward(self, x):
        h = self.tok(x) + self.pos(torch.arange(x.shape[1]))
        h = self.encoder(h, src_key_padding_mask=x.eq(PAD))
        return self.cls_head(h[:, 0])


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    d = r.choice([32, 48])
    layers = r.choice([2, 3])
    lr = r.choice([3e-2, 5e-2])
    bs = r.choice([32, 48, 64])
    steps = r.choice([150, 180, 200])

    drng = random.Random(9000 + seed)
    # argument names carry their role: src/callback/key... come first, dst/delay/value... second;
    # each callee uses a few of them
    names = list(range(N_NAME))
    drng.shuffle(names)
    role_a, role_b = names[:N_NAME // 2], names[N_NAME // 2:]
    first = [drng.sample(role_a, 8) for _ in range(N_CALLEE)]
    second = [drng.sample(role_b, 8) for _ in range(N_CALLEE)]
    batches = []
    for _ in range(steps):
        rows = [_call_site(drng, first, second) for _ in range(bs)]
        batches.append((torch.tensor([t for t, _ in rows]), torch.tensor([y for _, y in rows])))

    torch.manual_seed(seed)
    model = BugDetector(d, 4, layers)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3 if fixed else lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
