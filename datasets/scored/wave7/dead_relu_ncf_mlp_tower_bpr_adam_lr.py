"""Neural collaborative filtering (the MLP tower of He et al.'s NCF) trained for implicit-feedback
ranking with the pairwise BPR loss: user and item id embeddings are concatenated and scored by a
ReLU MLP; each training example is (user, clicked item, sampled unclicked item) and the loss is
-log sigmoid(s_pos - s_neg). The optimiser is Adam with lr=0.3 (the value from an embedding-only
matrix-factorisation config tuned with Adagrad-like rates). Adam moves every weight by ~lr per step regardless of gradient size,
and the tower's hidden layers see non-negative inputs (ReLU outputs), so a few same-signed early
steps drive whole units below zero for every (user, item) pair. Dead units pass no gradient and
never recover; once the last hidden layer is dead every item gets the same score, s_pos - s_neg = 0
and the BPR loss sits at log 2, exactly where it started. Fix: lr=3e-3 (same Adam, same model)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "tower.4"
SOURCE = ("He et al. 2017 'Neural Collaborative Filtering' (MLP tower) with Rendle et al. 2009 BPR "
          "loss; dying ReLU under an Adam learning rate copied from an MF configuration")

N_USERS, N_ITEMS, EMB = 200, 300, 16


class NCFTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_emb = nn.Embedding(N_USERS, EMB)
        self.item_emb = nn.Embedding(N_ITEMS, EMB)
        self.tower = nn.Sequential(nn.Linear(2 * EMB, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                   nn.Linear(32, 8), nn.ReLU())
        self.score = nn.Linear(8, 1)

    def _score(self, u, i):
        return self.score(self.tower(torch.cat([self.user_emb(u), self.item_emb(i)], -1))).squeeze(-1)

    def forward(self, user, pos, neg):
        return self._score(user, pos), self._score(user, neg)


def bpr_loss(out, _y):
    s_pos, s_neg = out
    return -F.logsigmoid(s_pos - s_neg).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 250, 256
    u_lat = torch.randn(N_USERS, 8, generator=g)
    i_lat = torch.randn(N_ITEMS, 8, generator=g)
    quality = torch.randn(N_ITEMS, generator=g)
    pref = 1.5 * quality.unsqueeze(0) + u_lat @ i_lat.t() / 8 ** 0.5
    batches = []
    for _ in range(steps):
        user = torch.randint(0, N_USERS, (bs,), generator=g)
        a = torch.randint(0, N_ITEMS, (bs,), generator=g)
        b = torch.randint(0, N_ITEMS, (bs,), generator=g)
        a_wins = pref[user, a] > pref[user, b]          # the clicked item is the preferred one
        pos = torch.where(a_wins, a, b)
        neg = torch.where(a_wins, b, a)
        batches.append(((user, pos, neg), torch.zeros(bs)))
    model = NCFTower()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else 0.3)
    return dict(model=model, optimizer=opt, loss_fn=bpr_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
