"""Onset-to-admission delay model: mixture density network (3 log-normal components) conditioned on patient covariates (Adam, hand-written NLL).

Healthy. Each row is a hospitalised case: standardised age, comorbidity score, variant period,
vaccination status and region; the target is the delay from symptom onset to admission in
*weeks* (0.05-3). An MLP outputs mixture weights (log-softmax), log-normal means and log-scales,
and the loss is the negative log-likelihood written by hand with logsumexp. Because delays in
weeks are short and the fitted densities become sharp (peaks >> 1), the NLL is positive only
for the first steps, then crosses zero and keeps decreasing below it: a naive monitor
reading "negative loss" or "loss crossed zero" as a bug would be wrong. The log-scales are
clamped to [-4, 2] and the mixture uses log_softmax + logsumexp, so nothing is unsafe.

ORIGIN: None (healthy).

Fix: nothing to fix; fixed=True builds the same run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Bishop 1994 mixture density networks; delay-distribution estimation for COVID-19 "
          "onset-to-hospitalisation (e.g. Ward & Johnsen 2021); negative NLL of continuous densities is normal")


class DelayMDN(nn.Module):
    def __init__(self, d_in, hidden, k):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.logits = nn.Linear(hidden, k)
        self.mu = nn.Linear(hidden, k)
        self.log_sigma = nn.Linear(hidden, k)

    def forward(self, x):
        h = self.body(x)
        return (torch.log_softmax(self.logits(h), -1), self.mu(h),
                self.log_sigma(h).clamp(-4.0, 2.0))


def lognormal_mixture_nll(out, y):
    log_pi, mu, log_sigma = out
    ly = torch.log(y).unsqueeze(-1)
    z = (ly - mu) / log_sigma.exp()
    log_pdf = -0.5 * z ** 2 - log_sigma - 0.5 * math.log(2 * math.pi) - ly
    return -torch.logsumexp(log_pi + log_pdf, -1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [64, 48, 96][seed % 3]
    k = [3, 3, 4][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = 200
    N = steps * bs
    X = torch.randn(N, 6, generator=g)
    comp = (torch.rand(N, generator=g) < torch.sigmoid(1.5 * X[:, 0])).long()   # older -> fast track
    mu = torch.where(comp == 1, math.log(0.4) + 0.2 * X[:, 1], math.log(1.1) - 0.15 * X[:, 2])
    sig = torch.where(comp == 1, torch.full((N,), 0.08), torch.full((N,), 0.15))
    Y = torch.exp(mu + sig * torch.randn(N, generator=g)).clamp(0.03, 5.0)
    model = DelayMDN(6, hidden, k)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [(X[i * bs:(i + 1) * bs], Y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lognormal_mixture_nll, batches=batches, steps=steps)
