"""Biased matrix factorisation (Funk-SVD style: r_ui = mu + b_u + b_i + p_u . q_i) written with
nn.Embedding for the user and item factor tables and trained with plain SGD on the summed squared
error (per-rating lr 0.04). nn.Embedding initialises its weight from N(0, 1), not the N(0, 0.1^2)
that Funk/Koren-style recipes and libraries such as Surprise (init_std_dev=0.1) use. With rank 32
the initial dot products have variance ~32, so predictions are off by ~+-6 stars from step 0, and
the curvature of the loss w.r.t. one user's factor vector is ~|q_i|^2 = 32 instead of 0.32: the SGD
step that is fine for properly scaled factors multiplies the factor error every step, the factors
blow up and the loss goes to inf/NaN within ~6 steps. The fixed run only re-initialises the factor
tables with std 0.1.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "user_factors"
SOURCE = ("nn.Embedding default N(0,1) init used for MF factor tables (PyTorch forum threads "
          "'matrix factorization loss explodes / nan'); Surprise SVD init_std_dev=0.1; Koren et al. 2009")

N_USERS, N_ITEMS, RANK = 300, 200, 32


class BiasedMF(nn.Module):
    def __init__(self, mu, fixed):
        super().__init__()
        self.user_factors = nn.Embedding(N_USERS, RANK)
        self.item_factors = nn.Embedding(N_ITEMS, RANK)
        self.user_bias = nn.Embedding(N_USERS, 1)
        self.item_bias = nn.Embedding(N_ITEMS, 1)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)
        self.register_buffer("mu", torch.tensor(float(mu)))
        if fixed:
            nn.init.normal_(self.user_factors.weight, std=0.1)
            nn.init.normal_(self.item_factors.weight, std=0.1)
        # else: keep nn.Embedding's default N(0, 1)

    def forward(self, users, items):
        dot = (self.user_factors(users) * self.item_factors(items)).sum(-1)
        return self.mu + self.user_bias(users).squeeze(-1) + self.item_bias(items).squeeze(-1) + dot


def loss_fn(pred, y):
    # summed squared error: the batched form of Funk's per-rating SGD update
    return ((pred - y) ** 2).sum()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    # ground truth: low-rank taste + user/item offsets, ratings clipped to 1..5
    P = torch.randn(N_USERS, 4, generator=g) * 0.6
    Q = torch.randn(N_ITEMS, 4, generator=g) * 0.6
    bu = torch.randn(N_USERS, generator=g) * 0.4
    bi = torch.randn(N_ITEMS, generator=g) * 0.5
    n_obs = 12000
    u = torch.randint(0, N_USERS, (n_obs,), generator=g)
    i = torch.randint(0, N_ITEMS, (n_obs,), generator=g)
    r = 3.6 + bu[u] + bi[i] + (P[u] * Q[i]).sum(-1) + 0.3 * torch.randn(n_obs, generator=g)
    r = r.clamp(1.0, 5.0)
    model = BiasedMF(r.mean(), fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.04)   # the usual per-rating SGD step of Funk-SVD recipes
    steps, B = 200, 512
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_obs, (B,), generator=g)
        batches.append(((u[idx], i[idx]), r[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
