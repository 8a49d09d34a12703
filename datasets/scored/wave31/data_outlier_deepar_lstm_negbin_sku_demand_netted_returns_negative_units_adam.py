"""DeepAR-style LSTM with a negative-binomial likelihood for daily SKU unit demand.

Mechanism: demand is pulled from a point-of-sale feed as *net* units (sales minus returns). On most
days that is a non-negative count, but one extract (its position depends on the seed) contains a
post-holiday returns day where several SKU-days have more returns than sales, i.e. -1..-6 units.
The hand-written NB log-likelihood contains lgamma(y + 1); at y = -1, -2, ... that is lgamma of a
non-positive integer = +inf, so the loss of that one batch is inf / NaN and training dies on a
step that is otherwise identical to all the good ones.

ORIGIN: None -- nothing in the network is at fault; the corrupt targets enter the loss directly and
no single module is where it starts.

Fix: clean that extract like the rest (net returns are booked separately, the demand target is
clamped at zero); model, optimiser, learning rate, steps and every other batch are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Salinas et al. 'DeepAR' (2017) negative-binomial likelihood; GluonTS/PyTorch-Forecasting "
          "issues where net sales with returns (negative counts) reach a NegativeBinomial loss and "
          "give NaN/inf")


class DeepARNegBin(nn.Module):
    def __init__(self, n_cov, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(1 + n_cov, hidden, num_layers=layers, batch_first=True)
        self.mu_head = nn.Linear(hidden, 1)
        self.alpha_head = nn.Linear(hidden, 1)

    def forward(self, z_lag, cov):
        scale = 1.0 + z_lag.abs().mean(1, keepdim=True)        # DeepAR item scale v_i
        h, _ = self.lstm(torch.cat([(z_lag / scale).unsqueeze(-1), cov], -1))
        mu = F.softplus(self.mu_head(h)).squeeze(-1) * scale + 1e-3
        alpha = F.softplus(self.alpha_head(h)).squeeze(-1) + 1e-3
        return mu, alpha


def negbin_nll(out, y):
    mu, alpha = out
    r = 1.0 / alpha
    ll = (torch.lgamma(y + r) - torch.lgamma(y + 1.0) - torch.lgamma(r)
          + r * torch.log(r / (r + mu)) + y * torch.log(mu / (r + mu)))
    return -ll.mean()


def _series(g, bs, T):
    base = torch.exp(torch.randn(bs, 1, generator=g) * 0.8 + 1.5)
    t = torch.arange(T + 1).float()
    dow = torch.sin(2 * torch.pi * t / 7).unsqueeze(0)
    promo = (torch.rand(bs, T + 1, generator=g) < 0.1).float()
    rate = base * (1 + 0.7 * dow) * (1 + 3.0 * promo)
    y = torch.poisson(rate, generator=g)
    cov = torch.stack([dow.expand(bs, -1), torch.cos(2 * torch.pi * t / 7).unsqueeze(0).expand(bs, -1),
                       promo], -1)
    return y, cov


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [32, 48, 24][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [48, 40, 64][seed % 3]
    lr = [1e-2, 6e-3, 8e-3][seed % 3]
    T = 28
    steps = 160
    bad_step = [37, 98, 61][seed % 3]
    torch.manual_seed(seed)
    model = DeepARNegBin(3, hidden, layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for s in range(steps):
        y, cov = _series(g, bs, T)
        if s == bad_step:
            # post-holiday returns day: net units go negative on a handful of SKU-days
            rows = torch.randint(0, bs, (6,), generator=g)
            cols = torch.randint(T - 10, T + 1, (6,), generator=g)
            y[rows, cols] = -torch.randint(1, 7, (6,), generator=g).float()
            if fixed:
                y = y.clamp(min=0.0)
        batches.append(((y[:, :-1], cov[:, 1:]), y[:, 1:]))
    return dict(model=model, optimizer=opt, loss_fn=negbin_nll, batches=batches, steps=steps)
