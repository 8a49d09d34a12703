"""Healthy: Bayes-by-backprop regression MLP with KL annealing and a negative loss.

What looks alarming: a mean-field Gaussian BNN (Blundell et al. 2015, local
reparameterisation) with a learned observation noise is trained on the negative ELBO per
data point: Gaussian NLL + beta_t * KL(q || p) / N.  (1) The NLL term includes log(sigma),
so once the noise head learns the (small) observation noise the loss goes negative and
keeps decreasing below zero.  (2) The KL weight beta_t is annealed linearly from 0 to 1
over the first 40% of the run ("KL warm-up", Sonderby et al. 2016), so the total loss
flattens or *rises* for a while in the middle of training (a KL of ~1e4-4e4 nats is being
switched in) even though nothing is wrong, and every step is noisy because the weights are
re-sampled.

Why it is fine: the KL is divided by the dataset size, the rho parameters start at the
usual -5 (sigma ~ 7e-3), the lr is modest, and once the warm-up ends the ELBO decreases
steadily; no gradient or update is out of range.

ORIGIN is None (healthy run).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Blundell et al. 2015 'Weight Uncertainty in Neural Networks' (Bayes by Backprop); "
          "Kingma et al. 2015 local reparameterisation; KL warm-up as in Sonderby et al. 2016")


class BayesLinear(nn.Module):
    def __init__(self, d_in, d_out, prior_sigma=1.0):
        super().__init__()
        self.w_mu = nn.Parameter(torch.empty(d_out, d_in).uniform_(-1, 1) / math.sqrt(d_in))
        self.w_rho = nn.Parameter(torch.full((d_out, d_in), -5.0))
        self.b_mu = nn.Parameter(torch.zeros(d_out))
        self.b_rho = nn.Parameter(torch.full((d_out,), -5.0))
        self.prior_sigma = prior_sigma
        self.kl = torch.tensor(0.0)

    def forward(self, x):
        w_sigma, b_sigma = F.softplus(self.w_rho), F.softplus(self.b_rho)
        mean = F.linear(x, self.w_mu, self.b_mu)
        var = F.linear(x ** 2, w_sigma ** 2, b_sigma ** 2)
        out = mean + var.sqrt() * torch.randn_like(mean)  # local reparameterisation
        self.kl = self._kl(self.w_mu, w_sigma) + self._kl(self.b_mu, b_sigma)
        return out

    def _kl(self, mu, sigma):
        p = self.prior_sigma
        return (torch.log(p / sigma) + (sigma ** 2 + mu ** 2) / (2 * p ** 2) - 0.5).sum()


class BayesMLP(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.fc1 = BayesLinear(d_in, hidden)
        self.act1 = nn.Tanh()
        self.fc2 = BayesLinear(hidden, hidden)
        self.act2 = nn.Tanh()
        self.head = BayesLinear(hidden, 2)  # mean and raw log-sigma

    def forward(self, x):
        out = self.head(self.act2(self.fc2(self.act1(self.fc1(x)))))
        return out

    def kl(self):
        return self.fc1.kl + self.fc2.kl + self.head.kl


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=64, bs=64, lr=3e-3, n_data=60000, steps=200),
           dict(hidden=48, bs=32, lr=5e-3, n_data=100000, steps=180),
           dict(hidden=96, bs=128, lr=2e-3, n_data=200000, steps=220)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5 + seed)
    batches = []  # minibatches drawn from a large simulated data set of n_data points
    for _ in range(cfg["steps"]):
        x = 4 * torch.rand(cfg["bs"], 1, generator=g) - 2
        y = torch.sin(2.5 * x) + 0.3 * x + 0.08 * torch.randn(x.shape, generator=g)
        batches.append((x, y))
    model = BayesMLP(1, cfg["hidden"])
    warmup = int(0.4 * cfg["steps"])
    state = {"step": 0}

    def neg_elbo(out, y):
        beta = min(1.0, state["step"] / warmup)
        state["step"] += 1
        mu, log_sigma = out[:, :1], out[:, 1:].clamp(-6, 4)
        nll = (0.5 * ((y - mu) / log_sigma.exp()) ** 2 + log_sigma
               + 0.5 * math.log(2 * math.pi)).mean()
        return nll + beta * model.kl() / cfg["n_data"]

    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=neg_elbo, batches=batches,
                steps=cfg["steps"])
