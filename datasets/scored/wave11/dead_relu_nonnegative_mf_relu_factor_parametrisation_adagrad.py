"""Non-negative matrix factorisation of a rating matrix done "the deep-learning way": unconstrained
embedding tables are passed through ReLU so that the factors are non-negative (r_ui ~ relu(P_u) .
relu(Q_i)), initialised NMF-style with U(0, 1) and trained with Adagrad at lr=1.0 on large batches.
The initial predictions are somewhat too high (~4 vs a mean rating ~2.5), so the gradient on almost
every factor coordinate is positive, and Adagrad's first step moves every coordinate by ~lr = 1.0
downwards, i.e. by more than the coordinate itself: after ONE step ~90% of user and item rows are
entirely negative. relu(P_u) = 0 gives a prediction of 0 and, because ReLU passes no gradient below
zero, those rows receive exactly zero gradient forever. The squared error jumps from ~3 to E[r^2] ~
7 and stays flat there for the rest of the run: no NaN, no recovery. The fixed run uses Adagrad with
lr=0.05.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "user_factors"
SOURCE = ("NMF via ReLU-parametrised embeddings (e.g. 'non-negative embeddings with relu' recipes) "
          "trained with a too-large Adagrad lr; dying-ReLU pattern (Lu et al. 2019, 'Dying ReLU and "
          "initialization')")

N_USERS, N_ITEMS, RANK = 250, 180, 16


class ReluNMF(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_factors = nn.Embedding(N_USERS, RANK)
        self.item_factors = nn.Embedding(N_ITEMS, RANK)
        nn.init.uniform_(self.user_factors.weight, 0.0, 1.0)
        nn.init.uniform_(self.item_factors.weight, 0.0, 1.0)

    def forward(self, users, items):
        p = F.relu(self.user_factors(users))
        q = F.relu(self.item_factors(items))
        return (p * q).sum(-1)


def loss_fn(pred, y):
    return F.mse_loss(pred, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    W = torch.rand(N_USERS, 4, generator=g)
    H = torch.rand(N_ITEMS, 4, generator=g)
    n_obs = 10000
    u = torch.randint(0, N_USERS, (n_obs,), generator=g)
    i = torch.randint(0, N_ITEMS, (n_obs,), generator=g)
    r = 1.0 + 1.5 * (W[u] * H[i]).sum(-1) + 0.2 * torch.rand(n_obs, generator=g)
    model = ReluNMF()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05 if fixed else 1.0)
    steps, B = 150, 2048
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_obs, (B,), generator=g)
        batches.append(((u[idx], i[idx]), r[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
