"""Attentional FM regressor frozen by one early batch whose labels are unix timestamps.

Mechanism: an Attentional Factorization Machine (Xiao et al. 2017) is trained with squared
loss on +1 / -1 targets (the AFM paper's Frappe / MovieLens-tag setup) with Adam.  One of
the first shards was exported with a shifted column, so the "label" column of that batch
holds the event timestamp (~1.6e9).  That single batch has an MSE of ~1e18 and gradients
~1e9 on every parameter it touches (all embedding rows are touched: small vocabularies).
Adam's second-moment estimate absorbs g**2 ~ 1e18 and, decaying at 0.999 per step, keeps
sqrt(v) ~ 1e7-1e8 for thousands of steps, so once the momentum of the outlier step has
decayed every update is ~lr * 1e-8: the model is frozen where that step left it (predictions
shifted towards the huge labels) and the loss stays at or above its starting level for the
rest of the run.  The loss is finite all along: a stall, not a NaN.

ORIGIN is None: the fault is one corrupt batch, not a module.

Fix: the shifted shard's labels are repaired (the true +1 / -1 targets); every other batch
is identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("AFM (Xiao et al., IJCAI 2017) squared-loss training; a shifted CSV column putting "
          "timestamps into the label of one shard, and the Adam second-moment 'freeze' after "
          "a single huge gradient (well-known Adam failure after one outlier batch).")


class AFM(nn.Module):
    def __init__(self, n_fields, vocab, k, t):
        super().__init__()
        self.emb = nn.Embedding(n_fields * vocab, k)
        nn.init.normal_(self.emb.weight, std=0.1)
        self.lin = nn.Embedding(n_fields * vocab, 1)
        nn.init.zeros_(self.lin.weight)
        self.bias = nn.Parameter(torch.zeros(1))
        self.register_buffer("offsets", torch.arange(n_fields) * vocab)
        i, j = torch.triu_indices(n_fields, n_fields, offset=1)
        self.register_buffer("pi", i)
        self.register_buffer("pj", j)
        self.attention = nn.Sequential(nn.Linear(k, t), nn.ReLU(), nn.Linear(t, 1, bias=False))
        self.p = nn.Linear(k, 1, bias=False)

    def forward(self, ids):
        ids = ids + self.offsets
        e = self.emb(ids)                                   # (B, F, k)
        inter = e[:, self.pi] * e[:, self.pj]               # (B, P, k) pair-wise interactions
        a = torch.softmax(self.attention(inter), dim=1)     # (B, P, 1) attention over pairs
        pooled = (a * inter).sum(1)                         # (B, k)
        return self.bias + self.lin(ids).sum((1, 2)) + self.p(pooled).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    n_fields = [8, 10, 6][seed]
    vocab = [20, 16, 24][seed]
    k = [16, 32, 16][seed]
    t = [16, 32, 8][seed]
    lr = [1e-2, 8e-3, 1.2e-2][seed]
    bs = [256, 320, 256][seed]
    steps = [140, 160, 150][seed]
    bad_step = [2, 3, 1][seed]

    n = bs * steps
    ids = torch.randint(0, vocab, (n, n_fields), generator=g)
    V = torch.randn(n_fields, vocab, 4, generator=g)
    W = torch.randn(n_fields, vocab, generator=g)
    v = V[torch.arange(n_fields), ids]
    s = 0.5 * (v.sum(1).pow(2).sum(1) - v.pow(2).sum((1, 2))) / n_fields
    s = s + 0.7 * W[torch.arange(n_fields), ids].sum(1) / n_fields ** 0.5
    y = torch.where(s > s.median(), 1.0, -1.0)
    flip = torch.rand(n, generator=g) < 0.05
    y[flip] = -y[flip]
    if not fixed:
        sl = slice(bad_step * bs, (bad_step + 1) * bs)
        y[sl] = 1.6e9 + 3.0e7 * torch.rand(bs, generator=g)      # event timestamps
    batches = [(ids[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]

    model = AFM(n_fields, vocab, k, t)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
