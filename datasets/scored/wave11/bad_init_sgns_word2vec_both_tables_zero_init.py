"""Skip-gram with negative sampling (word2vec SGNS) where BOTH embedding tables are zero-initialised.
The reference word2vec.c initialises the input vectors syn0 uniformly in [-0.5/d, 0.5/d] and only
the output vectors syn1neg to zero. A re-implementation that "follows the paper" by zeroing both
tables sits on an exact saddle: every score u_c . v_o is 0, the gradient w.r.t. the input table is
(sigma(s) - t) * v_o = 0 and the gradient w.r.t. the output table is (sigma(s) - t) * u_c = 0, so
neither table ever moves. Nothing is NaN, the loss is frozen at (1 + K) * log 2 from step 0 and the
run silently goes nowhere. The fixed run restores word2vec.c's small uniform init of the input
table.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "in_embed"
SOURCE = ("word2vec.c InitNet (syn0 uniform (rand-0.5)/layer1_size, syn1neg zeros); recurring "
          "'my skip-gram loss never changes' reports from ports that zero both tables")

V, D, K, WIN = 240, 32, 5, 2
N_TOPICS = 12


def _corpus(g):
    # sentences drawn from topic-specific Zipf vocabularies
    per = V // N_TOPICS
    zipf = torch.tensor([1.0 / (r + 1) for r in range(per)])
    sents = []
    for _ in range(900):
        t = int(torch.randint(0, N_TOPICS, (1,), generator=g))
        L = int(torch.randint(6, 14, (1,), generator=g))
        w = torch.multinomial(zipf, L, replacement=True, generator=g) + t * per
        sents.append(w)
    return sents


class SGNS(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.in_embed = nn.Embedding(V, D)
        self.out_embed = nn.Embedding(V, D)
        with torch.no_grad():
            self.out_embed.weight.zero_()
            if fixed:
                self.in_embed.weight.uniform_(-0.5 / D, 0.5 / D)
            else:
                self.in_embed.weight.zero_()

    def forward(self, center, context, negatives):
        u = self.in_embed(center)                      # (B, D)
        v = self.out_embed(context)                    # (B, D)
        vn = self.out_embed(negatives)                 # (B, K, D)
        pos = (u * v).sum(-1)
        neg = torch.bmm(vn, u.unsqueeze(-1)).squeeze(-1)
        return pos, neg


def loss_fn(out, y):
    pos, neg = out
    return -(F.logsigmoid(pos) + F.logsigmoid(-neg).sum(-1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    sents = _corpus(g)
    centers, contexts = [], []
    for s in sents:
        for i in range(len(s)):
            for j in range(max(0, i - WIN), min(len(s), i + WIN + 1)):
                if j != i:
                    centers.append(int(s[i])); contexts.append(int(s[j]))
    centers = torch.tensor(centers); contexts = torch.tensor(contexts)
    counts = torch.bincount(torch.cat(sents), minlength=V).float()
    noise = (counts + 1.0) ** 0.75
    model = SGNS(fixed)
    opt = torch.optim.SGD(model.parameters(), lr=8.0)
    steps, B = 200, 256
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(centers), (B,), generator=g)
        negs = torch.multinomial(noise, B * K, replacement=True, generator=g).view(B, K)
        batches.append(((centers[idx], contexts[idx], negs), torch.zeros(B)))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
