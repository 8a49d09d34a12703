"""Item2vec / word2vec skip-gram with negative sampling (SGNS): centre and context embedding
tables, loss -log sigma(u.v) - sum_k log sigma(-u.v_k) with 5 unigram^0.75 negatives, on
item co-occurrence pairs from synthetic shopping sessions. Per-pair SGD rates of 0.025-0.2 are
usual for SGNS; this port averages the loss over a 512-pair batch and applied the linear
scaling rule to the high end, lr = 0.2 x 512 ~ 102. Popular items appear many times per batch,
so their rows take steps far larger than the vectors: dot products grow without bound, the
loss climbs instead of falling and the embeddings finally overflow to inf (inf - inf = NaN)
about 120 steps in. Fixed: lr=10, nothing else changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Mikolov et al. 2013 word2vec (SGD, per-pair alpha); Barkan & Koenigstein 2016 item2vec; "
          "linear lr scaling misapplied to a batch-mean SGNS loss ('word2vec pytorch loss nan')")


class SGNS(nn.Module):
    def __init__(self, n_items, dim=32):
        super().__init__()
        self.center = nn.Embedding(n_items, dim)
        self.context = nn.Embedding(n_items, dim)
        nn.init.uniform_(self.center.weight, -0.5 / dim, 0.5 / dim)
        nn.init.uniform_(self.context.weight, -0.5 / dim, 0.5 / dim)

    def forward(self, center, pos, neg):
        u = self.center(center)                      # B, d
        v = self.context(pos)                        # B, d
        vn = self.context(neg)                       # B, K, d
        return (u * v).sum(-1), torch.einsum("bd,bkd->bk", u, vn)


def sgns_loss(out, _t):
    pos, neg = out
    return -(F.logsigmoid(pos) + F.logsigmoid(-neg).sum(-1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12000 + seed)
    N, K, bs, steps = 400, 5, 512, 150
    model = SGNS(N)
    cat = torch.randint(0, 20, (N,), generator=g)             # item categories
    pop = 1.0 / torch.arange(1, N + 1).float() ** 0.7
    noise = pop ** 0.75 / (pop ** 0.75).sum()
    by_cat = [torch.nonzero(cat == c).flatten() for c in range(20)]
    batches = []
    for s in range(steps):
        c = torch.multinomial(pop, bs, replacement=True, generator=g)
        ctx = torch.empty(bs, dtype=torch.long)
        for b in range(bs):                                    # co-purchased item, same category
            pool = by_cat[int(cat[c[b]])]
            ctx[b] = pool[torch.randint(0, pool.numel(), (1,), generator=g)]
        neg = torch.multinomial(noise, bs * K, replacement=True, generator=g).view(bs, K)
        batches.append(((c, ctx, neg), None))
    opt = torch.optim.SGD(model.parameters(), lr=10.0 if fixed else 0.2 * bs)
    return dict(model=model, optimizer=opt, loss_fn=sgns_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
