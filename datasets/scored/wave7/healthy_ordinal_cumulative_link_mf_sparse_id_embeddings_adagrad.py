"""Ordinal matrix factorisation for 1-5 star product reviews: a proportional-odds (cumulative logit)
model P(y <= k | u, i) = sigmoid(theta_k - s_ui) with s_ui = <p_u, q_i> + b_u + b_i, user/item
vectors and biases in nn.Embedding(sparse=True) tables, and ordered cut-points
theta = theta_0 + cumsum(softplus(delta)). The class log-probabilities are computed in log space
(log sigmoid and log1p(-exp(.)) of their difference), and everything is trained with Adagrad, which
accepts the sparse embedding gradients. What looks alarming: each batch of 512 ratings touches
only about a third of the 1200 users and 1500 items, so for roughly two thirds of the embedding rows
the gradient is exactly zero at every step and the embedding gradient norm is tiny next to the cut-points'; the
star ratings are noisy, so the loss falls only to a high floor. Both are normal for sparse
collaborative filtering; the run is healthy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("McCullagh 1980 proportional-odds model; ordinal matrix factorisation (Koren & Sill 2011 "
          "'OrdRec'); PyTorch sparse embeddings with Adagrad")

N_USERS, N_ITEMS, DIM, K = 1200, 1500, 8, 5


class OrdinalMF(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_vec = nn.Embedding(N_USERS, DIM, sparse=True)
        self.item_vec = nn.Embedding(N_ITEMS, DIM, sparse=True)
        self.user_bias = nn.Embedding(N_USERS, 1, sparse=True)
        self.item_bias = nn.Embedding(N_ITEMS, 1, sparse=True)
        for emb in (self.user_vec, self.item_vec):
            nn.init.normal_(emb.weight, std=0.3)
        for emb in (self.user_bias, self.item_bias):
            nn.init.zeros_(emb.weight)
        self.theta0 = nn.Parameter(torch.tensor(-1.5))
        self.delta = nn.Parameter(torch.zeros(K - 2))

    def forward(self, user, item):
        s = (self.user_vec(user) * self.item_vec(item)).sum(-1)
        s = s + self.user_bias(user).squeeze(-1) + self.item_bias(item).squeeze(-1)
        theta = torch.cat([self.theta0.view(1), self.theta0 + torch.cumsum(F.softplus(self.delta) + 0.5, 0)])
        return theta.unsqueeze(0) - s.unsqueeze(1)       # (B, K-1) cumulative logits


def ordinal_nll(cum_logits, y):
    log_cdf = F.logsigmoid(cum_logits)                   # log P(y <= k), k = 0..K-2
    log_sf = F.logsigmoid(-cum_logits)                    # log P(y > k)
    first = log_cdf[:, :1]
    last = log_sf[:, -1:]
    mid = log_cdf[:, 1:] + torch.log1p(-torch.exp(log_cdf[:, :-1] - log_cdf[:, 1:]))
    log_p = torch.cat([first, mid, last], dim=1)          # (B, K)
    return -log_p.gather(1, y.unsqueeze(1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 250, 512
    pu = torch.randn(N_USERS, 4, generator=g) * 0.8
    qi = torch.randn(N_ITEMS, 4, generator=g) * 0.8
    bu = 0.7 * torch.randn(N_USERS, generator=g)
    bi = 0.9 * torch.randn(N_ITEMS, generator=g)
    cuts = torch.tensor([-2.5, -1.5, -0.3, 1.0])
    batches = []
    for _ in range(steps):
        user = torch.randint(0, N_USERS, (bs,), generator=g)
        item = torch.randint(0, N_ITEMS, (bs,), generator=g)
        latent = (pu[user] * qi[item]).sum(-1) + bu[user] + bi[item] + 1.0
        noise = torch.log(torch.rand(bs, generator=g).clamp_min(1e-6))
        noise = noise - torch.log1p(-torch.exp(noise).clamp_max(1 - 1e-6))  # logistic noise
        stars = torch.bucketize(latent + noise, cuts)                      # 0..4
        batches.append(((user, item), stars))
    model = OrdinalMF()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    return dict(model=model, optimizer=opt, loss_fn=ordinal_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
