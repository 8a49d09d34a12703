"""Bayesian MLP regressor sampled with stochastic-gradient Langevin dynamics (Welling & Teh 2011).
The potential is U(theta) = N * mean minibatch NLL + Gaussian prior, and the SGLD update is
theta <- theta - eps * grad U + sqrt(2 eps) * xi.

Mechanism: because U is scaled by the dataset size N (thousands), the step size eps has to be of
order 1e-5-1e-6.  The user kept eps = 1e-3 from an SGD run on the *mean* loss, i.e. an effective
step N times too large: the first updates overshoot the curvature of U, the weights oscillate with
growing amplitude and the potential overflows to inf/NaN within a few dozen steps.
ORIGIN: None - a global step-size problem, not one module.
Fix: eps scaled for the N-weighted potential (the only change)."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Welling & Teh 2011 SGLD; step size must shrink with the N-scaled potential (pysgmcmc / 'SGLD diverges' forum reports)"


class SGLD(torch.optim.Optimizer):
    """theta <- theta - lr * grad + sqrt(2 lr) * N(0, 1)."""

    def __init__(self, params, lr, generator):
        super().__init__(params, dict(lr=lr))
        self.gen = generator

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr = group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                noise = torch.randn(p.shape, generator=self.gen)
                p.add_(-lr * p.grad + math.sqrt(2 * lr) * noise)


class BayesMLP(nn.Module):
    def __init__(self, d_in, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
                                 nn.Linear(width, 1))

    def forward(self, x):
        return self.net(x)


def make_potential(model, n_data, noise_std, prior_std=1.0):
    def potential(pred, y):
        nll = 0.5 * ((y - pred) / noise_std) ** 2
        prior = sum((p ** 2).sum() for p in model.parameters()) / (2 * prior_std ** 2)
        return n_data * nll.mean() + prior
    return potential


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [32, 64, 48][seed % 3]
    n_data = [2000, 5000, 3000][seed % 3]
    bs = [50, 100, 64][seed % 3]
    lr = [5e-6, 2e-6, 2e-6][seed % 3] if fixed else [1e-3, 5e-4, 2e-3][seed % 3]
    steps = 100
    d_in = 5
    model = BayesMLP(d_in, width)
    w = torch.randn(d_in, 1, generator=g)
    X = torch.randn(n_data, d_in, generator=g)
    Y = torch.sin(X @ w) + 0.1 * torch.randn(n_data, 1, generator=g)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_data, (bs,), generator=g)
        batches.append((X[idx], Y[idx]))
    opt = SGLD(model.parameters(), lr=lr, generator=torch.Generator().manual_seed(seed + 1000))
    return dict(model=model, optimizer=opt, loss_fn=make_potential(model, n_data, 0.1), batches=batches,
                steps=steps)
