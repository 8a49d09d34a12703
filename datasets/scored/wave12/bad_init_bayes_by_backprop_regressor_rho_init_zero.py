"""Bayes-by-backprop MLP regressor (Blundell et al. 2015) for a tabular property-prediction task.
Each weight has a Gaussian posterior N(mu, softplus(rho)^2), sampled with the reparameterisation
trick on every forward pass; the loss is the Gaussian NLL of the batch (fixed observation noise)
plus a down-weighted closed-form KL to a N(0, 1) prior.  The posterior scale parameter rho was
initialised at 0 (softplus(0) = 0.69) instead of around -5 (sigma ~ 7e-3): every weight starts
with a noise standard deviation several times larger than its mean (|mu| <= 1/sqrt(fan_in)), so
the sampled pre-activations of the first layer are dominated by weight noise and the noise
multiplies through the next two layers.  The prediction is essentially random for every batch,
the gradient of the data term is mostly sampling noise, and at Adam's lr of 1e-3 rho cannot move
far enough to shrink the noise within the run: the loss wanders around a huge level and never
comes down, without any NaN.  Fixed: rho initialised at -5, nothing else changed."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "body.0"
SOURCE = ("Blundell et al. 2015 'Weight Uncertainty in Neural Networks' and the many Bayes-by-backprop "
          "reimplementation threads where rho initialised at 0 (sigma ~0.7) leaves the sampled network "
          "pure noise and the regressor never fits (rho must start around -3..-6)")


class BayesLinear(nn.Module):
    def __init__(self, n_in, n_out, rho_init):
        super().__init__()
        bound = 1.0 / math.sqrt(n_in)
        self.w_mu = nn.Parameter(torch.empty(n_out, n_in).uniform_(-bound, bound))
        self.w_rho = nn.Parameter(torch.full((n_out, n_in), float(rho_init)))
        self.b_mu = nn.Parameter(torch.zeros(n_out))
        self.b_rho = nn.Parameter(torch.full((n_out,), float(rho_init)))

    def kl(self):
        tot = 0.0
        for mu, rho in ((self.w_mu, self.w_rho), (self.b_mu, self.b_rho)):
            sig = F.softplus(rho)
            tot = tot + (0.5 * (sig ** 2 + mu ** 2 - 1.0) - torch.log(sig)).sum()
        return tot

    def forward(self, x):
        w = self.w_mu + F.softplus(self.w_rho) * torch.randn_like(self.w_mu)
        b = self.b_mu + F.softplus(self.b_rho) * torch.randn_like(self.b_mu)
        return F.linear(x, w, b)


class BBBRegressor(nn.Module):
    def __init__(self, n_in, hidden, rho_init):
        super().__init__()
        self.body = nn.ModuleList([BayesLinear(n_in, hidden, rho_init), BayesLinear(hidden, hidden, rho_init)])
        self.head = BayesLinear(hidden, 1, rho_init)
        self.register_buffer("log_noise", torch.tensor(math.log(0.5)))

    def forward(self, x):
        h = x
        for layer in self.body:
            h = torch.relu(layer(h))
        mean = self.head(h).squeeze(-1)
        kl = sum(m.kl() for m in [*self.body, self.head])
        return mean, self.log_noise, kl


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_feat, n_train, bs, steps = 10, 2048, 128, 200
    X = torch.randn(n_train, n_feat, generator=g)
    wt = torch.randn(n_feat, generator=g) / math.sqrt(n_feat)
    y = 1.5 * torch.tanh(X @ wt * 2.0) + 0.5 * X[:, 0] * X[:, 1] + 0.1 * torch.randn(n_train, generator=g)
    y = (y - y.mean()) / y.std()
    kl_weight = 0.02

    model = BBBRegressor(n_feat, 48, rho_init=-5.0 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss_fn(out, target):
        mean, log_noise, kl = out
        var = torch.exp(2 * log_noise)
        nll = 0.5 * ((target - mean) ** 2 / var + 2 * log_noise + math.log(2 * math.pi)).mean()
        return nll + kl_weight * kl / n_train

    batches = []
    for s in range(steps):
        idx = torch.randint(0, n_train, (bs,), generator=g)
        batches.append((X[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
