"""DLRM click-through model fed raw Criteo-style count features (the log(x + 1) step skipped).

Architecture: Facebook's DLRM (Naumov et al. 2019) in miniature: a bottom MLP over the dense
(integer) features, one embedding table per categorical feature, the dot-product feature
interaction (all pairwise dot products between the bottom-MLP vector and the embeddings,
concatenated with the bottom-MLP vector), and a top MLP producing the click logit; BCE-with-logits
loss, SGD with momentum.  Data are synthetic Criteo-like rows:
8-11 heavy-tailed count features (log-normal counts, from single digits to ~1e5: impressions,
dwell times, ...) and 6 categorical ids; the click probability depends on log counts and on the
categories.

Mechanism: the Criteo integer features are counts; the DLRM reference loader transforms them with
`X_int = np.log(X_int + 1)` before training.  A re-implementation that feeds the raw counts to the
bottom MLP gives first-layer pre-activations of 1e4-1e5, a bottom-MLP vector in the thousands
to tens of thousands, logits in the tens to hundreds and a BCE loss of 7-100+ at step 0 (instead
of ln 2); the weight gradients scale with the counts and the first SGD updates blow the weights
up until the loss is inf/NaN within 3-4 steps.

ORIGIN: `bot_l.0`, the bottom MLP's first Linear, the first layer that sees the unscaled counts.

fixed=True: the dense features go through log(x + 1), exactly as the DLRM loader does; model,
init, optimizer, lr and the sampled data are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "bot_l.0"
SOURCE = ("facebookresearch/dlrm: Criteo Kaggle integer features are counts, transformed by "
          "np.log(X_int + 1) in dlrm_data_pytorch.py; feeding the raw counts to the bottom MLP")


class DLRM(nn.Module):
    def __init__(self, n_dense, table_sizes, emb_dim, bot_hidden, top_hidden):
        super().__init__()
        self.bot_l = nn.Sequential(
            nn.Linear(n_dense, bot_hidden), nn.ReLU(),
            nn.Linear(bot_hidden, emb_dim), nn.ReLU(),
        )
        self.emb_l = nn.ModuleList([nn.Embedding(n, emb_dim) for n in table_sizes])
        for e in self.emb_l:                                  # DLRM's uniform(-1/sqrt(n), 1/sqrt(n))
            nn.init.uniform_(e.weight, -e.num_embeddings ** -0.5, e.num_embeddings ** -0.5)
        n_vec = len(table_sizes) + 1
        n_int = n_vec * (n_vec - 1) // 2
        self.top_l = nn.Sequential(
            nn.Linear(emb_dim + n_int, top_hidden), nn.ReLU(),
            nn.Linear(top_hidden, 1),
        )
        li, lj = torch.tril_indices(n_vec, n_vec, offset=-1)
        self.register_buffer("li", li, persistent=False)
        self.register_buffer("lj", lj, persistent=False)

    def forward(self, dense, sparse):
        x = self.bot_l(dense)
        ly = [emb(sparse[:, k]) for k, emb in enumerate(self.emb_l)]
        T = torch.stack([x] + ly, dim=1)                      # (B, n_vec, d)
        Z = torch.bmm(T, T.transpose(1, 2))
        R = torch.cat([x, Z[:, self.li, self.lj]], dim=1)
        return self.top_l(R).squeeze(1)


def _make_batches(g, steps, bs, n_dense, table_sizes, log_transform):
    mu = 1.0 + 8.0 * torch.rand(n_dense, generator=g)         # log-count centres: e^1 .. e^9
    sigma = 0.6 + 1.2 * torch.rand(n_dense, generator=g)
    w_dense = torch.randn(n_dense, generator=g) * 1.2 / n_dense ** 0.5
    cat_effects = [torch.randn(n, generator=g) * 1.0 for n in table_sizes]
    batches = []
    for _ in range(steps):
        z = torch.randn(bs, n_dense, generator=g)
        counts = torch.floor(torch.exp(mu + sigma * z))        # raw integer counts
        ids = torch.stack([torch.randint(0, n, (bs,), generator=g) for n in table_sizes], 1)
        logit = (z * w_dense).sum(1) + sum(cat_effects[k][ids[:, k]] for k in range(len(table_sizes)))
        logit = logit - 0.5
        y = (torch.rand(bs, generator=g) < torch.sigmoid(logit)).float()
        dense = torch.log(counts + 1.0) if log_transform else counts
        batches.append(((dense, ids), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    n_dense = (8, 11, 9)[seed % 3]
    table_sizes = [(20, 50, 12, 30, 8, 40), (16, 60, 10, 25, 12, 35), (24, 40, 14, 28, 9, 45)][seed % 3]
    bs = (64, 48, 80)[seed % 3]
    lr = (0.1, 0.08, 0.12)[seed % 3]
    steps = (300, 260, 280)[seed % 3]
    model = DLRM(n_dense, table_sizes, emb_dim=16, bot_hidden=32, top_hidden=32)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = _make_batches(g, steps, bs, n_dense, table_sizes, log_transform=fixed)
    return dict(model=model, optimizer=opt, loss_fn=F.binary_cross_entropy_with_logits,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
