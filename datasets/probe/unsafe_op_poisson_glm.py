"""unsafe_op: log of a ReLU-clamped learned feature in a power-law Poisson GLM.

Mechanism: a count-regression model in the log-log (power-law, Cobb-Douglas) form that
insurance and traffic-count models use: log mu = b + sum_j beta_j log s_j, trained with the
Poisson negative log-likelihood. Instead of fixed covariates, the s_j are learned combinations
of the raw positive covariates, ``s = relu(mix(x))``, and the model takes ``torch.log(s)``; the
ReLU is there "to keep the log's argument non-negative". The mix starts as the identity (each
s_j is one raw covariate: the textbook log-log GLM) and the intercept at log(mean count), so at
the start every s_j is a positive covariate, the log is safe, the run is calm and the loss
falls. The counts depend on a *net* quantity, volume minus a large fraction of returns
(x_0 - rho x_1, positive but close to 0 on many rows), so fitting them pulls the mix away from
the identity: Adam moves every mix weight by about lr per step and the rows pick up negative
weights on the other covariates (the net-volume row as intended, the others as they trade off
against each other). A learned s_j is then no longer positive by construction, and the first
batch with a row where some s_j has crossed below zero gets relu(.) = 0 exactly and
log(0) = -inf, after 20-70 calm steps. The head multiplies it by a finite beta_j, the log-rate
is +-inf and the Poisson loss (exp(eta) - y eta) is inf or NaN. Which feature crosses first and
at which step depends on the lr, the return ratio, the width and the batch (seed).

ORIGIN: ``features``, the module whose forward takes the log (its ``mix`` Linear stays finite;
the -inf is born in ``features`` and ``head`` only passes it on).
Fixed: the same model with the argument clamped to a floor, ``torch.log(s.clamp_min(1e-3))``
instead of ``torch.log(relu(s))``: a row that overshoots gets log(1e-3) and no gradient through
the clamp (a few rows per batch do, all run long), and training goes on to 65-85% of the
starting loss.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "features"
SOURCE = (
    "log(0) = -inf from relu/clamp(min=0) before torch.log (PyTorch forum threads 'NaN loss "
    "with torch.log(relu(x))', 'log of zero gives -inf in custom layer'; the usual advice to "
    "use clamp_min(eps) or log1p); log-log (power-law) Poisson GLMs for counts (McCullagh & "
    "Nelder 1989) with PoissonNLLLoss(log_input=True)."
)


class LogFeatures(nn.Module):
    """s = relu(mix(x)), returns log(s); ``eps`` > 0 clamps s at eps instead."""

    def __init__(self, d: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.mix = nn.Linear(d, d)
        with torch.no_grad():
            self.mix.weight.copy_(torch.eye(d))  # start as the plain log-log GLM
            self.mix.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.mix(x)
        if self.eps:
            return torch.log(s.clamp_min(self.eps))
        return torch.log(torch.relu(s))


class PowerLawGLM(nn.Module):
    def __init__(self, d: int, eps: float, intercept: float) -> None:
        super().__init__()
        self.features = LogFeatures(d, eps)
        self.head = nn.Linear(d, 1)
        nn.init.zeros_(self.head.weight)  # start as the intercept-only model
        nn.init.constant_(self.head.bias, intercept)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x)).squeeze(1)


def _data(seed: int, steps: int, batch: int, d: int, rho: float, betas: torch.Tensor) -> list:
    """Positive covariates (log-normal volumes); x_1 is returns, a fraction u of x_0 with u up
    to 1, and the rate is a power law in the net volume x_0 - rho x_1 and in x_2..x_{d-1}."""
    g = torch.Generator().manual_seed(320_000 + seed)
    batches = []
    for _ in range(steps):
        x = torch.exp(0.3 * torch.randn(batch, d, generator=g))
        u = 0.3 + 0.7 * torch.rand(batch, generator=g) ** 0.5  # return ratio in (0.3, 1)
        x[:, 1] = u * x[:, 0]
        net = x[:, 0] - rho * x[:, 1]  # > 0: rho < 1
        log_mu = 3.0 + betas[0] * torch.log(net) + torch.log(x[:, 2:]) @ betas[1:]
        y = torch.poisson(torch.exp(log_mu), generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d = rng.choice([4, 6, 8])
    batch = rng.choice([64, 128, 256])
    steps = rng.choice([160, 180, 200])
    lr = rng.choice([2e-3, 3e-3, 4e-3])
    rho = rng.choice([0.8, 0.9, 0.95])

    g = torch.Generator().manual_seed(321_000 + seed)
    betas = torch.cat([torch.tensor([1.2]), 0.6 * torch.randn(d - 2, generator=g)])
    batches = _data(seed, steps, batch, d, rho, betas)
    intercept = float(torch.log(torch.cat([y for _, y in batches]).mean()))
    torch.manual_seed(seed)
    model = PowerLawGLM(d, eps=1e-3 if fixed else 0.0, intercept=intercept)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.PoissonNLLLoss(log_input=True, full=True),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
