"""Deep & Cross Network (DCN v1) for CTR prediction: field embeddings + dense features -> cross
layers x_{l+1} = x0 * (x_l . w_l) + b_l + x_l in parallel with a ReLU deep tower. Dense counts are
normally log1p-transformed; one batch comes from a backfill job that skipped the transform and
duplicated a heavy publisher's rows, carrying raw impression counts ~1e6. The cross layers form
x0 * (x0 . w) ~ 1e12, the logits and gradients are astronomically large, SGD writes inf/NaN into
the cross weights and the loss is non-finite from the next step.
ORIGIN: None (corrupt batch). Fix: drop (or log1p) the untransformed batch."""
import torch, torch.nn as nn
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "DCN/Criteo pipelines where a backfill skips log1p on count features"
class DCN(nn.Module):
    def __init__(s, cards, k, nd, L, h):
        super().__init__()
        s.embs = nn.ModuleList([nn.Embedding(c, k) for c in cards]); d = k * len(cards) + nd
        s.cross_w = nn.ParameterList([nn.Parameter(torch.randn(d) * 0.01) for _ in range(L)])
        s.cross_b = nn.ParameterList([nn.Parameter(torch.zeros(d)) for _ in range(L)])
        s.deep = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        s.head = nn.Linear(d + h, 1)
    def forward(s, cat, dense):
        x0 = torch.cat([e(cat[:, i]) for i, e in enumerate(s.embs)] + [dense], 1); x = x0
        for w, b in zip(s.cross_w, s.cross_b): x = x0 * (x @ w)[:, None] + b + x
        return s.head(torch.cat([x, s.deep(x0)], 1)).squeeze(-1)
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    cards, k, L, h, bs, steps, lr, bad = [([100, 20, 8], 8, 2, 64, 128, 80, 0.05, 25), ([60, 30, 12, 5], 6, 3, 48, 64, 100, 0.08, 60), ([200, 10], 12, 2, 96, 256, 70, 0.03, 40)][seed]
    nd = 4; model = DCN(cards, k, nd, L, h)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    tab = [torch.randn(c, generator=g) for c in cards]; wd = torch.randn(nd, generator=g)
    batches = []
    for i in range(steps):
        cat = torch.stack([torch.randint(0, c, (bs,), generator=g) for c in cards], 1)
        cnt = torch.poisson(torch.full((bs, nd), 20.0), generator=g)
        logit = 2.0 * sum(t[cat[:, j]] for j, t in enumerate(tab)) + (torch.log1p(cnt) - 3.0) @ wd
        y = (torch.rand(bs, generator=g) < torch.sigmoid(logit)).float()
        dense = torch.log1p(cnt) - 3.0
        if i == bad and not fixed:
            dense = cnt.clone(); dense[: bs // 4] = 1.0e6
        batches.append(((cat, dense), y))
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
