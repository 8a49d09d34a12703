"""Two-tower retrieval model (user tower over id + history bag, item tower over id + category)
trained with an in-batch sampled softmax. Both towers end in Linear -> ReLU, a common copy of the
hidden-layer block that makes the final embeddings non-negative. With Adam at lr~0.1 (a value
tuned for the sparse embedding tables, applied to the whole model) the first few updates push the
pre-activations of the user tower's final projection negative for every input; those ReLUs
output 0 for all users, receive no gradient, and never come back. Every logit becomes 0, the
in-batch softmax loss sits at log(batch) and nothing is NaN. The fixed run only lowers the learning
rate to 3e-3."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "user_tower.proj"
SOURCE = "two-tower / DSSM retrieval recipes with ReLU on the output embedding; 'all embeddings become zero, loss stuck at log(batch_size)' reports (TFRS / PyTorch forums)"


class Tower(nn.Module):
    def __init__(self, n_ids, n_side, d, h, bag):
        super().__init__()
        self.id_emb = nn.Embedding(n_ids, d)
        self.side = nn.EmbeddingBag(n_side, d, mode="mean") if bag else nn.Embedding(n_side, d)
        self.bag = bag
        self.hidden = nn.Linear(2 * d, h)
        self.act = nn.ReLU()
        self.proj = nn.Linear(h, d)
        self.out_act = nn.ReLU()

    def forward(self, ids, side):
        s = self.side(side)
        z = self.act(self.hidden(torch.cat([self.id_emb(ids), s], -1)))
        return self.out_act(self.proj(z))


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, n_cats, d, h):
        super().__init__()
        self.user_tower = Tower(n_users, n_items, d, h, bag=True)
        self.item_tower = Tower(n_items, n_cats, d, h, bag=False)

    def forward(self, users, hist, items, cats):
        return self.user_tower(users, hist) @ self.item_tower(items, cats).t()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_users, n_items, n_cats = 300, [200, 250, 180][seed % 3], 12
    d = [16, 24, 16][seed % 3]
    h = [32, 48, 24][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = [120, 150, 100][seed % 3]
    hist_len = 6
    item_cat = torch.randint(0, n_cats, (n_items,), generator=g)
    user_pref = torch.randint(0, n_cats, (n_users,), generator=g)
    items_by_cat = [torch.nonzero(item_cat == c).flatten() for c in range(n_cats)]
    def sample_items(cats):
        return torch.stack([items_by_cat[c][torch.randint(0, len(items_by_cat[c]), (1,), generator=g)][0]
                            if len(items_by_cat[c]) else torch.tensor(0) for c in cats.tolist()])
    batches = []
    for s in range(steps):
        u = torch.randint(0, n_users, (bs,), generator=g)
        hist = torch.stack([sample_items(user_pref[u]) for _ in range(hist_len)], 1)
        pos = sample_items(user_pref[u])
        batches.append(((u, hist, pos, item_cat[pos]), torch.arange(bs)))
    model = TwoTower(n_users, n_items, n_cats, d, h)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else [0.1, 0.12, 0.1][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=lambda logits, t: F.cross_entropy(logits, t),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
