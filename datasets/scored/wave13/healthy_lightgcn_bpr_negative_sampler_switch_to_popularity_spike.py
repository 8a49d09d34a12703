"""Healthy: LightGCN (parameter-free propagation over the normalised
user-item graph, layer-mean readout) trained with BPR + L2 on the ego
embeddings, with a negative sampler that switches from uniform to
popularity-proportional sampling part-way through training.

Why it looks alarming but is fine:
* at the switch the negatives suddenly become popular items that the model
  scores highly, so the BPR loss jumps up by a large factor in one step and
  the gradient norm spikes -- then it decays again as the model learns to
  rank the user's own items above popular ones;
* every step only touches the embedding rows of the sampled users/items and
  their graph neighbours, most of the table gets zero or tiny gradients;
* the L2 term is computed on the ego (layer-0) embeddings of the batch only,
  as in the reference implementation, so it fluctuates with the batch.
The loss ends well below its starting value (ln 2).

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("LightGCN (He et al., SIGIR 2020) reference PyTorch code; practice of switching to "
          "popularity / hard negative sampling mid-training (e.g. RecBole, 'loss jumps after "
          "changing the negative sampler' discussions)")


class LightGCN(nn.Module):
    def __init__(self, n_users, n_items, dim, layers, norm_adj):
        super().__init__()
        self.n_users, self.layers = n_users, layers
        self.embedding = nn.Embedding(n_users + n_items, dim)
        nn.init.normal_(self.embedding.weight, std=0.1)
        self.register_buffer("norm_adj", norm_adj)

    def propagate(self):
        e = self.embedding.weight
        out = [e]
        for _ in range(self.layers):
            e = self.norm_adj @ e
            out.append(e)
        return torch.stack(out).mean(0)

    def forward(self, users, pos, neg):
        all_e = self.propagate()
        u = all_e[users]
        i_pos = all_e[self.n_users + pos]
        i_neg = all_e[self.n_users + neg]
        ego = self.embedding(torch.cat([users, self.n_users + pos, self.n_users + neg]))
        reg = ego.pow(2).sum() / (2 * users.numel())
        return (u * i_pos).sum(-1), (u * i_neg).sum(-1), reg


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(users=150, items=220, dim=32, layers=3, bs=512, lr=5e-3, switch=70),
        dict(users=200, items=160, dim=24, layers=2, bs=384, lr=8e-3, switch=90),
        dict(users=120, items=300, dim=48, layers=4, bs=640, lr=4e-3, switch=55),
    ][seed % 3]
    g = torch.Generator().manual_seed(11000 + seed)
    steps = 140
    nu, ni = cfg["users"], cfg["items"]
    pu = torch.randn(nu, 8, generator=g)
    qi = torch.randn(ni, 8, generator=g)
    pop = torch.linspace(2.0, -2.0, ni)[torch.randperm(ni, generator=g)]
    scores = pu @ qi.t() + pop
    k = 12
    top = scores.topk(k, dim=1)[1]
    R = torch.zeros(nu, ni); R[torch.arange(nu)[:, None], top] = 1.0
    pairs = R.nonzero()
    item_pop = R.sum(0) + 1.0

    # symmetric-normalised bipartite adjacency
    A = torch.zeros(nu + ni, nu + ni)
    A[:nu, nu:] = R; A[nu:, :nu] = R.t()
    d = A.sum(1).clamp(min=1).rsqrt()
    norm_adj = d[:, None] * A * d[None, :]

    batches = []
    for step in range(steps):
        idx = torch.randint(0, pairs.size(0), (cfg["bs"],), generator=g)
        users, pos = pairs[idx, 0], pairs[idx, 1]
        if step < cfg["switch"]:
            neg = torch.randint(0, ni, (cfg["bs"],), generator=g)
        else:  # popularity-proportional negatives
            neg = torch.multinomial(item_pop ** 1.5, cfg["bs"], replacement=True, generator=g)
        batches.append(((users, pos, neg), torch.zeros(cfg["bs"])))

    torch.manual_seed(seed)
    model = LightGCN(nu, ni, cfg["dim"], cfg["layers"], norm_adj)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def loss_fn(out, _):
        s_pos, s_neg, reg = out
        return -F.logsigmoid(s_pos - s_neg).mean() + 1e-4 * reg

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
