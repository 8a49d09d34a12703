"""MLP-PLR (Gorishniy et al. 2022, periodic embeddings of numeric features) trained on raw
house-sale features: square feet, lot size, metres to the city centre, review counts, year built.
The periodic embedding computes sin/cos(2*pi*c*x) with trainable frequencies c ~ N(0, sigma); on raw
features with std ~1e3-1e4 the phases are hundreds of radians, so the embedding is a hash of x and
every Adam step on c (grad ~ x) scrambles it again: the loss stays at the target variance.
fixed=True: the numeric features are standardised (train mean/std) before the model, as the paper does.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("On Embeddings for Numerical Features in Tabular Deep Learning (arXiv 2203.05556) / "
          "rtdl_num_embeddings PeriodicEmbeddings; the paper preprocesses numeric features "
          "(quantile/standard scaling) and periodic embeddings are known to fail on raw-scale inputs")

N_NUM = 7


class PeriodicEmbeddings(nn.Module):
    def __init__(self, n_features, n_frequencies=16, sigma=0.1, d_embedding=16):
        super().__init__()
        self.frequencies = nn.Parameter(torch.randn(n_features, n_frequencies) * sigma)
        # PLR: per-feature linear layer on [cos, sin] followed by ReLU
        self.weight = nn.Parameter(torch.empty(n_features, 2 * n_frequencies, d_embedding))
        self.bias = nn.Parameter(torch.empty(n_features, d_embedding))
        bound = 1 / math.sqrt(2 * n_frequencies)
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):                      # x: (B, F)
        z = 2 * math.pi * self.frequencies[None] * x[..., None]
        z = torch.cat([torch.cos(z), torch.sin(z)], dim=-1)          # (B, F, 2K)
        z = torch.einsum("bfk,fkd->bfd", z, self.weight) + self.bias
        return F.relu(z)


class MLPPLR(nn.Module):
    def __init__(self, n_features=N_NUM, d_embedding=16, d_hidden=128):
        super().__init__()
        self.num_embeddings = PeriodicEmbeddings(n_features, d_embedding=d_embedding)
        self.backbone = nn.Sequential(
            nn.Linear(n_features * d_embedding, d_hidden), nn.ReLU(),
            nn.Linear(d_hidden, d_hidden), nn.ReLU(),
        )
        self.output = nn.Linear(d_hidden, 1)

    def forward(self, x_num):
        h = self.num_embeddings(x_num).flatten(1)
        return self.output(self.backbone(h)).squeeze(-1)


def _raw_features(g, n):
    sqft = torch.exp(7.5 + 0.4 * torch.randn(n, generator=g))                 # ~1900 +- 800
    lot = torch.exp(8.9 + 0.8 * torch.randn(n, generator=g))                  # ~10^4, skewed
    dist_m = 30000 * torch.rand(n, generator=g) ** 1.5                       # metres to centre
    reviews = torch.poisson(torch.full((n,), 40.0), generator=g) * torch.rand(n, generator=g) * 3
    yr_built = 1900 + 115 * torch.rand(n, generator=g)
    bedrooms = torch.randint(1, 7, (n,), generator=g).float()
    grade = torch.randint(3, 13, (n,), generator=g).float()
    return torch.stack([sqft, lot, dist_m, reviews, yr_built, bedrooms, grade], 1)


def _target(x):
    # log-price driven mostly by size, location and demand; computed from scaled copies
    s = (x[:, 0].log() - 7.5) / 0.4
    lot = (x[:, 1].log() - 8.9) / 0.8
    d = x[:, 2] / 10000
    r = x[:, 3] / 60
    age = (x[:, 4] - 1957) / 33
    y = 0.9 * s + 0.25 * lot - 0.8 * d + 0.35 * torch.sin(2.0 * d) + 0.3 * torch.tanh(r - 1)
    y = y + 0.2 * age ** 2 + 0.05 * (x[:, 6] - 8) + 0.15 * s * d
    return y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 200, 256
    X = _raw_features(g, steps * bs)
    y = _target(X)
    y = y + 0.15 * y.std() * torch.randn(y.shape, generator=g)
    y = (y - y.mean()) / y.std()                       # target is standardised in both runs
    if fixed:
        X = (X - X.mean(0)) / X.std(0)                 # StandardScaler on the numeric features
    batches = [(X[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    model = MLPPLR()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-5)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
