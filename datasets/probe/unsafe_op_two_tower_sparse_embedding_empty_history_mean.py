"""Two-tower retrieval model: the user tower mean-pools an nn.Embedding(sparse=True, padding_idx=0)
over the user's recent-item history with a hand-written masked mean, sum / count. Embeddings are
trained with SparseAdam, the dense towers with Adam (one wrapper optimizer). Mid-run the click log
reaches a sign-up campaign: cold-start users with an empty history (all padding) appear, count == 0,
the pooled vector is 0/0 = NaN and the in-batch softmax loss goes NaN.
fixed=True: the masked mean divides by count.clamp_min(1) (an empty history pools to the zero vector).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "user_tower"
SOURCE = ("Masked mean pooling `emb.sum(1) / mask.sum(1)` over padded histories giving NaN for empty "
          "sequences (PyTorch forums 'NaN after mean pooling with all-padding rows'; YouTube-DNN / "
          "two-tower retrieval with sparse embeddings and SparseAdam as in the PyTorch docs)")

N_ITEMS = 1000
N_CLUSTERS = 40
HIST = 20
DIM = 32
BATCH = 128
STEPS = 300


class SparseDenseAdam(torch.optim.Optimizer):
    """SparseAdam for sparse embedding tables, Adam for everything else, stepped together."""

    def __init__(self, sparse_params, dense_params, lr):
        sparse_params, dense_params = list(sparse_params), list(dense_params)
        super().__init__(sparse_params + dense_params, dict(lr=lr))
        self.sparse_opt = torch.optim.SparseAdam(sparse_params, lr=lr)
        self.dense_opt = torch.optim.Adam(dense_params, lr=lr)
        self.param_groups = self.sparse_opt.param_groups + self.dense_opt.param_groups
        self.sparse_opt.state = self.state
        self.dense_opt.state = self.state

    @torch.no_grad()
    def step(self, closure=None):
        self.sparse_opt.step()
        self.dense_opt.step()


class UserTower(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.item_emb = nn.Embedding(N_ITEMS, DIM, padding_idx=0, sparse=True)
        self.mlp = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, DIM))

    def forward(self, hist):
        mask = (hist != 0).unsqueeze(-1).float()
        summed = (self.item_emb(hist) * mask).sum(1)
        count = mask.sum(1)
        if self.fixed:
            count = count.clamp_min(1.0)
        pooled = summed / count
        return self.mlp(pooled)


class ItemTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.item_emb = nn.Embedding(N_ITEMS, DIM, padding_idx=0, sparse=True)
        self.mlp = nn.Sequential(nn.Linear(DIM, 64), nn.ReLU(), nn.Linear(64, DIM))

    def forward(self, items):
        return self.mlp(self.item_emb(items))


class TwoTower(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.user_tower = UserTower(fixed)
        self.item_tower = ItemTower()
        self.log_temp = nn.Parameter(torch.tensor(2.0))

    def forward(self, hist, pos_items):
        u = self.user_tower(hist)
        v = self.item_tower(pos_items)
        return (u @ v.t()) * self.log_temp.exp().clamp(max=50.0) / DIM ** 0.5


def _make_batches(seed):
    g = torch.Generator().manual_seed(seed)
    # items 1..N_ITEMS-1 are grouped into taste clusters
    item_cluster = torch.randint(0, N_CLUSTERS, (N_ITEMS,), generator=g)
    item_cluster[0] = -1
    members = [torch.nonzero(item_cluster == c).flatten() for c in range(N_CLUSTERS)]
    campaign_step = int(torch.randint(140, 200, (1,), generator=g))
    batches = []
    for step in range(STEPS):
        taste = torch.randint(0, N_CLUSTERS, (BATCH,), generator=g)
        hist = torch.zeros(BATCH, HIST, dtype=torch.long)
        pos = torch.zeros(BATCH, dtype=torch.long)
        lengths = torch.randint(3, HIST + 1, (BATCH,), generator=g)
        if step >= campaign_step:
            # new sign-ups from the campaign: no interactions in the look-back window yet
            n_cold = int(torch.randint(2, 9, (1,), generator=g))
            lengths[:n_cold] = 0
        for b in range(BATCH):
            pool = members[int(taste[b])]
            idx = torch.randint(0, len(pool), (int(lengths[b]) + 1,), generator=g)
            hist[b, : int(lengths[b])] = pool[idx[:-1]]
            pos[b] = pool[idx[-1]]
        batches.append(((hist, pos), torch.arange(BATCH)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = TwoTower(fixed)
    sparse = [p for n, p in model.named_parameters() if n.endswith("item_emb.weight")]
    dense = [p for n, p in model.named_parameters() if not n.endswith("item_emb.weight")]
    optimizer = SparseDenseAdam(sparse, dense, lr=1e-2)
    return dict(model=model, optimizer=optimizer, loss_fn=F.cross_entropy,
                batches=_make_batches(seed), steps=STEPS, amp_dtype=None, scaler=None)
