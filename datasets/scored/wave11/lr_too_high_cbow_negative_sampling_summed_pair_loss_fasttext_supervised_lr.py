"""CBOW word2vec with negative sampling (masked mean of the context window -> dot products with the
target and 5 unigram^0.75 negatives), written the way word2vec/fastText update: per-pair SGD, i.e.
the loss is summed over the (target, context) pairs of the batch. The lr was taken from fastText's
supervised text-classification tutorial (0.5) instead of its unsupervised cbow default (0.05). With
the summed loss every embedding row used by a frequent word gets dozens of pair updates per step at
10x the intended step size; as soon as the output vectors leave zero, the updates of the input and
output tables multiply each other, scores grow geometrically (loss ~1e3 -> 1e7 -> 1e20 in a few
steps) and the run ends in inf/NaN after ~20-30 steps. The fixed run uses lr 0.05.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("fastText defaults: lr 0.05 for unsupervised cbow/skipgram vs lr 0.1-1.0 in the supervised "
          "text-classification tutorial; word2vec.c per-pair SGD with alpha 0.05 for CBOW")

V, D, K, WIN, N_TOPICS = 300, 32, 5, 3, 10


def _corpus(g):
    per = V // N_TOPICS
    zipf = torch.tensor([1.0 / (r + 1) ** 1.1 for r in range(per)])
    func = torch.tensor([1.0 / (r + 1) for r in range(20)])  # function words shared by all topics
    sents = []
    for _ in range(800):
        t = int(torch.randint(1, N_TOPICS, (1,), generator=g))
        L = int(torch.randint(4, 16, (1,), generator=g))
        w = torch.multinomial(zipf, L, replacement=True, generator=g) + t * per
        fw = torch.multinomial(func, L, replacement=True, generator=g)
        use_f = torch.rand(L, generator=g) < 0.35
        sents.append(torch.where(use_f, fw, w))
    return sents


class CBOW(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_embed = nn.Embedding(V, D)
        self.out_embed = nn.Embedding(V, D)
        with torch.no_grad():
            self.in_embed.weight.uniform_(-0.5 / D, 0.5 / D)
            self.out_embed.weight.zero_()

    def forward(self, context, mask, target, negatives):
        e = self.in_embed(context) * mask.unsqueeze(-1)
        h = e.sum(1) / mask.sum(1, keepdim=True)
        pos = (h * self.out_embed(target)).sum(-1)
        neg = torch.bmm(self.out_embed(negatives), h.unsqueeze(-1)).squeeze(-1)
        return {"pos": pos, "neg": neg}


def loss_fn(out, y):
    # summed over the batch: the batched form of word2vec/fastText per-pair SGD updates
    return -(F.logsigmoid(out["pos"]) + F.logsigmoid(-out["neg"]).sum(-1)).sum()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    sents = _corpus(g)
    ctx, msk, tgt = [], [], []
    for s in sents:
        L = len(s)
        for i in range(L):
            c = [int(s[j]) for j in range(max(0, i - WIN), min(L, i + WIN + 1)) if j != i]
            if not c: continue
            pad = 2 * WIN - len(c)
            ctx.append(c + [0] * pad); msk.append([1.0] * len(c) + [0.0] * pad); tgt.append(int(s[i]))
    ctx = torch.tensor(ctx); msk = torch.tensor(msk); tgt = torch.tensor(tgt)
    counts = torch.bincount(torch.cat(sents), minlength=V).float()
    noise = (counts + 1) ** 0.75
    model = CBOW()
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 0.5)
    steps, B = 200, 256
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(tgt), (B,), generator=g)
        negs = torch.multinomial(noise, B * K, replacement=True, generator=g).view(B, K)
        batches.append(((ctx[idx], msk[idx], tgt[idx], negs), torch.zeros(B)))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
