"""Probabilistic ride-hailing ETA: a mixture density network (MLP trunk -> K Gaussian
components over standardised log travel time) for pickup-to-dropoff trips, so the app can
quote a time window rather than a point; features are standardised route distance, number of
signalised intersections, hour sin/cos, weekday, weather, zone congestion index; loss is the
hand-written mixture negative log-likelihood (log-sum-exp over components, log-sigma
parameterisation, sigma floor); Adagrad.

Why it is healthy but looks odd: the NLL of a continuous density is not bounded below by 0
-- once the components sharpen around the (low-noise) log durations the loss goes negative
and keeps decreasing, e.g. from ~+0.8 to ~-0.3 here. The mixture is computed with logsumexp and
log-softmax weights, sigma is floored with a softplus + 1e-3, so no log(0) or overflow can
happen; multimodality (free-flow vs congested regime) makes the early loss plateau-and-drop.

ORIGIN = None (healthy). Fix: nothing to fix; ``fixed`` builds the same run.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Bishop 1994 Mixture Density Networks; probabilistic ETA / travel-time distribution "
          "models (e.g. Uber/DiDi ETA uncertainty work); negative Gaussian NLL is expected for "
          "sharp densities")


class ETAMDN(nn.Module):
    def __init__(self, d_in, hidden, K):
        super().__init__()
        self.K = K
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, K)
        self.mu = nn.Linear(hidden, K)
        self.sigma = nn.Linear(hidden, K)

    def forward(self, x):
        h = self.trunk(x)
        return torch.stack([F.log_softmax(self.pi(h), -1), self.mu(h),
                            F.softplus(self.sigma(h)) + 1e-3], 0)


def mdn_nll(out, y):
    log_pi, mu, sigma = out[0], out[1], out[2]
    z = (y - mu) / sigma
    log_n = -0.5 * z * z - torch.log(sigma) - 0.5 * math.log(2 * math.pi)
    return -torch.logsumexp(log_pi + log_n, -1).mean()


def _trips(g, n, d):
    x = torch.randn(n, d, generator=g)
    congested = (torch.sigmoid(1.5 * x[:, 5] + 1.0 * torch.sin(2 * x[:, 1])) > torch.rand(n, generator=g)).float()
    logt = 0.7 * x[:, 0] + 0.15 * x[:, 2] + 0.1 * x[:, 3] + congested * (0.6 + 0.2 * x[:, 4].abs())
    logt = logt + (0.04 + 0.06 * congested) * torch.randn(n, generator=g)
    return x, ((logt - logt.mean()) / logt.std()).unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(14000 + seed)
    hidden = [64, 96, 128][seed % 3]
    K = [3, 4, 5][seed % 3]
    bs = [128, 96, 160][seed % 3]
    lr = [1e-2, 1.5e-2, 8e-3][seed % 3]
    steps = 300
    d = 8
    torch.manual_seed(seed)
    model = ETAMDN(d, hidden, K)
    x, y = _trips(g, steps * bs, d)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=mdn_nll, batches=batches, steps=steps)
