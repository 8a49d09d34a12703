"""GC-MC (graph convolutional matrix completion, van den Berg et al. 2017) on a
user-item bipartite rating graph: learned user/item features, one bipartite graph
convolution (users aggregate the items they rated and vice versa through a
degree-normalised bipartite adjacency), a dense layer and a bilinear decoder
predicting the rating of (user, item) pairs. Regression with MSE, momentum SGD.

Mechanism: ratings are on a 1-5 scale, but the export used 999 as a "withdrawn
rating" sentinel, and one shard of pairs (a different step per seed) carries it.
That single batch produces an MSE of ~1e5 and a gradient ~1e4x larger than
usual; the momentum-SGD step throws the embeddings and bilinear weights to
huge values, the next predictions are larger still and the loss runs off to
inf/NaN within a few steps.
ORIGIN is None: the failure comes from one corrupt batch, not a module.
Fix: filter the sentinel rows (the corrupt shard replaced by a clean one).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "GC-MC / recommender pipelines where a sentinel rating (e.g. 99, 999, -1) survives the CSV import; 'MSE explodes to nan in the middle of epoch 1' reports"


class GCMC(nn.Module):
    def __init__(self, n_users, n_items, a_ui, d=32, h=32):
        super().__init__()
        self.register_buffer("a_ui", a_ui)  # (U, I), normalised
        self.register_buffer("a_iu", a_ui.T.contiguous())
        self.user_feat = nn.Embedding(n_users, d)
        self.item_feat = nn.Embedding(n_items, d)
        nn.init.normal_(self.user_feat.weight, std=0.1)
        nn.init.normal_(self.item_feat.weight, std=0.1)
        self.w_conv = nn.Linear(d, h)
        self.act = nn.ReLU()
        self.dense_u = nn.Linear(h, h)
        self.dense_i = nn.Linear(h, h)
        self.bilinear = nn.Bilinear(h, h, 1)

    def forward(self, users, items):
        hu = self.act(self.w_conv(self.a_ui @ self.item_feat.weight + self.user_feat.weight))
        hi = self.act(self.w_conv(self.a_iu @ self.user_feat.weight + self.item_feat.weight))
        zu = self.dense_u(hu)[users]
        zi = self.dense_i(hi)[items]
        return self.bilinear(zu, zi).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(U=60, I=50, B=64, lr=0.02, steps=80, bad=30), dict(U=80, I=40, B=128, lr=0.01, steps=100, bad=55),
           dict(U=50, I=70, B=32, lr=0.03, steps=70, bad=18)][seed % 3]
    g = torch.Generator().manual_seed(seed)
    U, I = cfg["U"], cfg["I"]
    pu, qi = torch.randn(U, 4, generator=g), torch.randn(I, 4, generator=g)
    true = (3 + 0.8 * (pu @ qi.T) / 2).clamp(1, 5).round()
    mask = torch.rand(U, I, generator=g) < 0.25
    a = mask.float()
    a_ui = a / (a.sum(1, keepdim=True).clamp_min(1).sqrt() * a.sum(0, keepdim=True).clamp_min(1).sqrt())
    obs = mask.nonzero()
    batches = []
    for step in range(cfg["steps"]):
        idx = torch.randint(0, obs.size(0), (cfg["B"],), generator=g)
        u, i = obs[idx, 0], obs[idx, 1]
        r = true[u, i].clone()
        if step == cfg["bad"] and not fixed:
            r[: cfg["B"] // 4] = 999.0  # sentinel for "withdrawn rating" never filtered
        batches.append(((u, i), r))
    torch.manual_seed(seed)
    model = GCMC(U, I, a_ui)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
