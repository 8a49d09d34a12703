"""A Set Transformer (Lee et al. 2019: two ISAB blocks with 4 inducing points, PMA pooling with one
seed, post-LayerNorm MABs) counts the number of distinct categories in a variable-size, padded set of
category ids, trained with AdamW at lr = 3e-2, a value that had worked for a small linear baseline.
With every attention projection, LayerNorm gain/bias and inducing point moving by ~lr per step, the
first updates overshoot: the encoder collapses to a state in which the (LayerNorm'd) features of every
element of every set are the same vector, the pooled representation no longer depends on the input,
and the classifier falls back to predicting the marginal label distribution for every set. The loss
then sits at the entropy of the label marginal for the rest of the run. The same run with lr = 1e-3
learns the count."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Lee et al. 2019 'Set Transformer'; post-LN attention blocks trained with Adam at a too large "
          "learning rate collapse to a constant prediction (cf. Liu et al. 2020 'Understanding the "
          "Difficulty of Training Transformers')")

V, D, HEADS, N_MAX, N_IND = 12, 32, 4, 16, 4


class MAB(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.h = heads

    def forward(self, x, y, key_mask=None):
        B, nq, d = x.shape
        nk = y.shape[1]
        dh = d // self.h
        q = self.q(x).view(B, nq, self.h, dh).transpose(1, 2)
        k = self.k(y).view(B, nk, self.h, dh).transpose(1, 2)
        v = self.v(y).view(B, nk, self.h, dh).transpose(1, 2)
        s = q @ k.transpose(-1, -2) / math.sqrt(dh)
        if key_mask is not None:
            s = s.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        a = torch.softmax(s, -1) @ v
        hdn = self.ln1(x + self.o(a.transpose(1, 2).reshape(B, nq, d)))
        return self.ln2(hdn + self.ff(hdn))


class ISAB(nn.Module):
    def __init__(self, d, heads, m):
        super().__init__()
        self.inducing = nn.Parameter(torch.randn(1, m, d) / math.sqrt(d))
        self.mab0, self.mab1 = MAB(d, heads), MAB(d, heads)

    def forward(self, x, mask):
        h = self.mab0(self.inducing.expand(x.shape[0], -1, -1), x, key_mask=mask)
        return self.mab1(x, h)


class SetTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.enc = nn.ModuleList([ISAB(D, HEADS, N_IND), ISAB(D, HEADS, N_IND)])
        self.seed = nn.Parameter(torch.randn(1, 1, D) / math.sqrt(D))
        self.pma = MAB(D, HEADS)
        self.out = nn.Linear(D, V + 1)

    def forward(self, ids, mask):
        x = self.emb(ids)
        for blk in self.enc:
            x = blk(x, mask)
        pooled = self.pma(self.seed.expand(ids.shape[0], -1, -1), x, key_mask=mask)
        return self.out(pooled.squeeze(1))


def make_batch(g, bs):
    sizes = torch.randint(4, N_MAX + 1, (bs,), generator=g)
    mask = torch.arange(N_MAX).unsqueeze(0) < sizes.unsqueeze(1)
    n_cats = torch.randint(1, 7, (bs,), generator=g)
    pick = (torch.rand(bs, N_MAX, generator=g) * n_cats.unsqueeze(1)).long()
    perm = torch.stack([torch.randperm(V, generator=g) for _ in range(bs)])
    ids = perm.gather(1, pick) * mask
    distinct = torch.tensor([len(set(ids[b, :sizes[b]].tolist())) for b in range(bs)])
    return (ids, mask), distinct


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SetTransformer()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3 if fixed else 3e-2, weight_decay=0.01)
    steps = 150
    batches = [make_batch(g, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
