"""House-price model with an uncertainty head: an MLP predicts a mean and a variance
(softplus) per listing and is trained with ``nn.GaussianNLLLoss`` and SGD with momentum. Features are fed raw
(living area in sq ft ~500-4500, lot size ~1e3-2e4 sq ft, year built ~1900-2020, bedrooms,
distance to centre in metres) and the target is the sale price in dollars (~1e5-1.5e6).

Mechanism: the first Linear layer receives inputs of order 1e3-1e4, so the hidden
activations and the predicted mean are O(1e3-1e4) of arbitrary sign while the targets are
O(1e5-1e6), and the initial variance is small relative to the squared error (O(1e11)). The
Gaussian NLL starts at ~1e8-1e15 and its gradient w.r.t. the first-layer weights is that
error times the raw feature values. The first SGD-with-momentum step is therefore
astronomically large, the weights jump to ~1e10 and beyond, and within a few steps the
mean/variance overflow and the loss becomes inf/NaN.

ORIGIN: ``net.0``, the first Linear layer: it is where the raw, unscaled features enter and
where the activation scale is set by the feature units.

Fix: standardise the features (z-score with dataset statistics) and the target (log-price,
z-scored); model, loss, optimiser and steps unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("Kaggle house-prices / Ames and King County notebooks feeding raw sqft, year and dollar prices to "
          "neural nets ('loss is huge and does not decrease'); Nix & Weigend 1994 mean-variance networks; "
          "torch.nn.GaussianNLLLoss")


class PriceNet(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 2))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        out = self.net(x)
        return out[:, 0], F.softplus(out[:, 1]) + 1e-6


def make_loss():
    nll = nn.GaussianNLLLoss()

    def loss_fn(out, y):
        mu, var = out
        return nll(mu, y, var)
    return loss_fn


def listings(g, n):
    sqft = 500 + 4000 * torch.rand(n, generator=g)
    lot = 1000 + 19000 * torch.rand(n, generator=g)
    year = 1900 + 120 * torch.rand(n, generator=g)
    beds = torch.randint(1, 7, (n,), generator=g).float()
    dist = 500 + 30000 * torch.rand(n, generator=g)
    x = torch.stack([sqft, lot, year, beds, dist], 1)
    log_price = (11.0 + 0.00035 * sqft + 0.00001 * lot + 0.004 * (year - 1960) + 0.03 * beds
                 - 0.00002 * dist + 0.1 * torch.randn(n, generator=g))
    return x, log_price


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 2 + seed % 2
    width = [64, 128, 96][seed % 3]
    batch = [64, 32, 128][seed % 3]
    lr = [0.01, 0.008, 0.005][seed % 3]
    steps = 150

    torch.manual_seed(seed)
    model = PriceNet(5, width, depth)

    x_ref, lp_ref = listings(g, 5000)
    x_mu, x_sd = x_ref.mean(0), x_ref.std(0)
    y_mu, y_sd = lp_ref.mean(), lp_ref.std()
    batches = []
    for _ in range(steps):
        x, lp = listings(g, batch)
        if fixed:
            batches.append(((x - x_mu) / x_sd, (lp - y_mu) / y_sd))
        else:
            batches.append((x, lp.exp()))              # raw features, price in dollars

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": make_loss(), "batches": batches, "steps": steps}
