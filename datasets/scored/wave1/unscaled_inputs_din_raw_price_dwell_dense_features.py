"""Deep Interest Network (DIN) style click-through-rate model: the user's recent item ids are
attended with a local activation unit conditioned on the candidate item, and the pooled interest
vector is concatenated with the candidate embedding and three dense context features before the
prediction MLP, trained with SGD + momentum. The dense features are fed in raw units straight
from the feature store: item price in cents (1e2-1e6), the user's total dwell time in seconds
(1e3-1e7) and account age in days. The first Linear of the prediction MLP (mlp.0) receives values
up to ~1e7 next to O(1) embeddings, the logits are in the thousands from step 0 and the binary
cross-entropy is ~1e3-1e4; its gradient on mlp.0 is proportional to those raw feature values, so
the first SGD steps move the dense-feature weights by ~1e4-1e5, the logits overflow and the loss
is NaN by step 3. The fixed run only applies the standard log1p + standardisation to the three
dense features."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "mlp.0"
SOURCE = ("Zhou et al. 2018 Deep Interest Network; common CTR-pipeline bug of feeding raw price / "
          "duration / count features without log-transform and normalisation")


class DIN(nn.Module):
    def __init__(self, n_items, d=16, n_dense=3):
        super().__init__()
        self.item_emb = nn.Embedding(n_items, d, padding_idx=0)
        self.att = nn.Sequential(nn.Linear(4 * d, 32), nn.Sigmoid(), nn.Linear(32, 1))
        self.mlp = nn.Sequential(nn.Linear(2 * d + n_dense, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                 nn.Linear(32, 1))
        nn.init.normal_(self.item_emb.weight, std=0.1)

    def forward(self, hist, cand, dense):
        h = self.item_emb(hist)                                     # B x L x d
        c = self.item_emb(cand)[:, None].expand_as(h)
        w = self.att(torch.cat([h, c, h - c, h * c], -1)).squeeze(-1)
        w = w.masked_fill(hist == 0, 0.0)                            # DIN: no softmax normalisation
        interest = (w[..., None] * h).sum(1)
        return self.mlp(torch.cat([interest, self.item_emb(cand), dense], -1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_items, n_cat, L, B = 400, 8, 12, 256
    item_cat = torch.randint(0, n_cat, (n_items,), generator=g)
    item_price = torch.exp(torch.empty(n_items).uniform_(4.6, 13.8, generator=g))      # cents
    raw = []
    for _ in range(20):
        fav = torch.randint(0, n_cat, (B,), generator=g)
        pool = [torch.nonzero(item_cat == c).flatten() for c in range(n_cat)]
        hist = torch.stack([pool[int(f)][torch.randint(0, len(pool[int(f)]), (L,), generator=g)] for f in fav])
        hist = torch.where(torch.rand(B, L, generator=g) < 0.3,
                           torch.randint(1, n_items, (B, L), generator=g), hist).clamp_min(1)
        lens = torch.randint(4, L + 1, (B,), generator=g)
        hist = hist.masked_fill(torch.arange(L)[None] >= lens[:, None], 0)
        cand = torch.randint(1, n_items, (B,), generator=g)
        dwell = torch.exp(torch.empty(B).uniform_(7.0, 16.0, generator=g))               # seconds
        age = torch.empty(B).uniform_(1, 3000, generator=g)                              # days
        price = item_price[cand]
        match = (item_cat[cand] == fav).float()
        logit = -2.0 + 4.0 * match - 0.6 * (torch.log1p(price) - 9.2) + 0.4 * (torch.log1p(dwell) - 11.5)
        y = (torch.rand(B, generator=g) < torch.sigmoid(logit)).float()
        raw.append((hist, cand, torch.stack([price, dwell, age], 1), y))
    if fixed:
        alld = torch.log1p(torch.cat([r[2] for r in raw]))
        mu, sd = alld.mean(0), alld.std(0)
        raw = [(h, c, (torch.log1p(d) - mu) / sd, y) for h, c, d, y in raw]
    batches = [((h, c, d), y) for h, c, d, y in raw]
    model = DIN(n_items)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    steps = 200
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.binary_cross_entropy_with_logits(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
