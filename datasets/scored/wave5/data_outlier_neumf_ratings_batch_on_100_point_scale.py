"""NeuMF-style rating regressor (user/item embeddings concatenated into a ReLU MLP) trained with
plain SGD on explicit 1-5 star ratings.  One shard of the training log came from a partner feed that
reports ratings on a 0-100 scale; it was appended without conversion, so one mid-run batch
(step 60) has targets ~20x too large.  Its MSE is ~4000x the normal loss; the single SGD step it
produces throws the MLP weights and the touched embedding rows far from where they were, the next
ordinary batches then produce ever larger errors and gradients, and the loss runs away through
1e5, 1e10 and inf to NaN within four steps.  The fixed run converts that batch to the 1-5 scale (divides by 20);
everything else is identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("He et al. 2017 'Neural Collaborative Filtering' (MLP tower over concatenated embeddings); "
          "data pattern: a mis-scaled shard (0-100 instead of 1-5 stars) mixed into explicit-feedback "
          "training data")

N_USERS, N_ITEMS, DIM = 300, 500, 16
BAD_STEP = 60


class NeuMF(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(N_USERS, DIM)
        self.item = nn.Embedding(N_ITEMS, DIM)
        nn.init.normal_(self.user.weight, std=0.1)
        nn.init.normal_(self.item.weight, std=0.1)
        self.tower = nn.Sequential(nn.Linear(2 * DIM, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                   nn.Linear(32, 1))

    def forward(self, users, items):
        h = torch.cat([self.user(users), self.item(items)], dim=-1)
        return self.tower(h).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    pu = torch.randn(N_USERS, 3, generator=g)
    pi = torch.randn(N_ITEMS, 3, generator=g)
    bu = 0.5 * torch.randn(N_USERS, generator=g)
    bi = 0.5 * torch.randn(N_ITEMS, generator=g)
    steps, bs = 200, 256
    batches = []
    for step in range(steps):
        u = torch.randint(0, N_USERS, (bs,), generator=g)
        i = torch.randint(0, N_ITEMS, (bs,), generator=g)
        r = 3.5 + bu[u] + bi[i] + 0.4 * (pu[u] * pi[i]).sum(-1) + 0.3 * torch.randn(bs, generator=g)
        r = r.clamp(1.0, 5.0).round()
        if step == BAD_STEP:
            r = r * 20.0                               # partner shard on a 0-100 scale
            if fixed:
                r = r / 20.0                           # converted back to stars
        batches.append(((u, i), r))
    model = NeuMF()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
