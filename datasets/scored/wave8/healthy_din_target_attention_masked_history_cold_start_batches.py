"""Deep Interest Network (Zhou et al. 2018) CTR model: a padded behaviour sequence of item ids
(padding_idx=0 plus a boolean mask) is weighted by a target-attention activation unit over
[h, t, h-t, h*t], summed without softmax as in the paper, concatenated with the target item
embedding and scored by an MLP; the model returns a dict (logit and attention weights) and is
trained with AdamW on logloss.  Every 20th batch comes from the cold-start traffic bucket whose
users have an EMPTY history (all positions masked, pooled interest vector exactly 0, zero gradient
into the attention unit for the whole batch): those batches cannot be personalised, the loss
jumps on them (most visibly early on) and comes straight back on the next batch.  Exact-zero
pooled vectors, all-masked rows, zero attention gradients and periodic loss bumps look alarming,
but the run is healthy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Zhou et al. 'Deep Interest Network for Click-Through Rate Prediction' (KDD 2018); "
          "cold-start users with empty behaviour sequences in CTR logs")

N_ITEMS, EMB, L, N_CAT = 201, 16, 20, 8


class DIN(nn.Module):
    def __init__(self):
        super().__init__()
        self.item_emb = nn.Embedding(N_ITEMS, EMB, padding_idx=0)
        nn.init.normal_(self.item_emb.weight[1:], std=0.1)
        self.attn = nn.Sequential(nn.Linear(4 * EMB, 32), nn.PReLU(), nn.Linear(32, 1))
        self.mlp = nn.Sequential(nn.Linear(2 * EMB, 64), nn.PReLU(), nn.Linear(64, 1))

    def forward(self, hist, mask, target):
        h = self.item_emb(hist)                                   # B, L, E
        t = self.item_emb(target)[:, None].expand_as(h)
        w = self.attn(torch.cat([h, t, h - t, h * t], -1)).squeeze(-1)
        w = w * mask.float()                                      # no softmax, masked weights
        interest = (w[..., None] * h).sum(1)
        logit = self.mlp(torch.cat([interest, self.item_emb(target)], 1)).squeeze(-1)
        return {"logit": logit, "attn": w}


def ctr_loss(out, y):
    return F.binary_cross_entropy_with_logits(out["logit"], y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    item_cat = torch.randint(0, N_CAT, (N_ITEMS,), generator=g)
    cat_bias = torch.randn(N_CAT, generator=g) * 0.5

    def sample(n, cold):
        fav = torch.randint(0, N_CAT, (n,), generator=g)
        length = torch.zeros(n, dtype=torch.long) if cold else torch.randint(3, L + 1, (n,), generator=g)
        hist = torch.randint(1, N_ITEMS, (n, L), generator=g)
        # history items mostly from the favourite category
        same = torch.rand(n, L, generator=g) < 0.8
        pool = [torch.nonzero(item_cat == c).squeeze(1) for c in range(N_CAT)]
        for c in range(N_CAT):
            rows = (fav == c)[:, None] & same
            k = int(rows.sum())
            if k:
                hist[rows] = pool[c][torch.randint(0, len(pool[c]), (k,), generator=g)]
        pos = torch.arange(L)[None]
        mask = pos < length[:, None]
        hist = torch.where(mask, hist, torch.zeros_like(hist))
        target = torch.randint(1, N_ITEMS, (n,), generator=g)
        match = (item_cat[target] == fav).float()
        logit = 6.0 * match - 3.0 + cat_bias[item_cat[target]]
        y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
        return (hist, mask, target), y

    steps = 200
    batches = [sample(256, cold=(s % 20 == 19)) for s in range(steps)]
    model = DIN()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=ctr_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
