"""Pointwise cross-encoder re-ranker (monoBERT-style, tiny): query and passage tokens are
concatenated with a [SEP] token and segment embeddings, encoded by a small TransformerEncoder,
the [CLS] state goes through the scoring head, BCE-with-logits against relevant / non-relevant
labels (1 positive : 3 sampled negatives per query); AdamW.

Mechanism: the scoring head was written by stacking the same `Linear -> ReLU` block three times,
so the relevance logit itself goes through a final nn.ReLU.  Three quarters of the labels are 0
and want a negative logit; the gradient therefore pushes the last pre-activation below 0 for
every pair, the final ReLU outputs exactly 0 with zero gradient (for the positives too), every
probability is 0.5 and the loss freezes at log 2.
ORIGIN: scorer.5, the ReLU applied to the relevance logit, whose single unit dies.
Fix: no activation on the logit (nn.Identity() in place of the last ReLU).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "scorer.5"
SOURCE = ("monoBERT (Nogueira & Cho 2019) pointwise re-ranking; common 'ReLU after the output "
          "layer' bug, PyTorch forum 'loss stuck at 0.693' threads")


class CrossEncoder(nn.Module):
    def __init__(self, V, d, layers, fixed):
        super().__init__()
        self.tok = nn.Embedding(V, d)
        self.seg = nn.Embedding(2, d)
        self.pos = nn.Parameter(torch.randn(32, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.scorer = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(),
                                    nn.Linear(d, 1), nn.Identity() if fixed else nn.ReLU())

    def forward(self, ids, seg):
        h = self.tok(ids) + self.seg(seg) + self.pos[: ids.shape[1]]
        h = self.enc(h)
        return self.scorer(h[:, 0]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    d, layers, nq, lr = [(16, 1, 6, 5e-3), (24, 2, 4, 3e-3), (16, 2, 5, 4e-3)][seed % 3]
    V, Lq, Lp = 40, 4, 8
    CLS, SEP = 0, 1
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    model = CrossEncoder(V, d, layers, fixed)
    steps = 80
    batches = []
    for _ in range(steps):
        ids, segs, labels = [], [], []
        for _ in range(nq):
            q = torch.randint(2, V, (Lq,), generator=g)
            for k in range(4):
                p = torch.randint(2, V, (Lp,), generator=g)
                if k == 0:   # relevant passage is written with the query terms
                    p = q[torch.randint(0, Lq, (Lp,), generator=g)]
                ids.append(torch.cat([torch.tensor([CLS]), q, torch.tensor([SEP]), p]))
                segs.append(torch.cat([torch.zeros(Lq + 2, dtype=torch.long), torch.ones(Lp, dtype=torch.long)]))
                labels.append(1.0 if k == 0 else 0.0)
        batches.append(((torch.stack(ids), torch.stack(segs)), torch.tensor(labels)))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def loss_fn(logits, y):
        return F.binary_cross_entropy_with_logits(logits, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
