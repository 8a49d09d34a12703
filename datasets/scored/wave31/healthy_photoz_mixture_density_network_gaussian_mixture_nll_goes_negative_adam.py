"""Photometric redshift with a mixture density network (colours + magnitude -> a K-component
Gaussian mixture over z), trained with the mixture negative log-likelihood computed with
logsumexp, Adam.

Why it looks suspicious but is healthy: the loss is a negative log *density* of a continuous
variable.  Once the mixture components narrow to sigma_z ~ 0.02-0.05 the density at the true
redshift is > 1 and the loss goes negative (down to about -1.5) and keeps falling; a monitor that
treats a negative loss, or a loss crossing zero, as broken is wrong here.  The colour-redshift
degeneracy (the 4000 A break confused with the Lyman/Balmer break) makes the posterior bimodal for
part of the sample, so several components stay alive with very different weights, and their
logits spread by ~10 units; the logsumexp keeps this stable.  sigma is softplus + 1e-3, so the
likelihood cannot collapse onto a point.

ORIGIN: None (healthy).

Fix: nothing to fix; ``fixed=True`` builds the same run.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Bishop 1994 mixture density networks; D'Isanto & Polsterer 2018 and Ansari et al. 2021 "
          "MDN photo-z with bimodal posteriors; negative NLL of continuous densities is expected")


def _make_data(g, n, n_bands=6):
    z = torch.rand(n, generator=g) * 2.8 + 0.05
    lam = torch.linspace(0.35, 1.0, n_bands)
    # two breaks: 4000A (z<1.5 moves through optical) and Lyman (z>2.5 enters u/g) -> degeneracy
    b4000 = 0.4 * (1 + z)
    blyman = 0.1216 * (1 + z)
    mags = 22.0 + 1.2 * torch.sigmoid((b4000[:, None] - lam[None, :]) * 14.0) \
        + 1.2 * torch.sigmoid((blyman[:, None] - lam[None, :]) * 14.0) \
        + 0.4 * torch.randn(n, 1, generator=g)
    mags = mags + 0.04 * torch.randn(n, n_bands, generator=g)
    colours = mags[:, :-1] - mags[:, 1:]
    x = torch.cat([colours, mags[:, 2:3]], 1)
    return (x - x.mean(0)) / x.std(0), z


class MDN(nn.Module):
    def __init__(self, d_in, width, depth, k):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        self.trunk = nn.Sequential(*layers)
        self.pi = nn.Linear(d, k)
        self.mu = nn.Linear(d, k)
        self.sigma = nn.Linear(d, k)
        with torch.no_grad():
            self.mu.bias.copy_(torch.linspace(0.3, 2.6, k))

    def forward(self, x):
        h = self.trunk(x)
        return self.pi(h), self.mu(h), F.softplus(self.sigma(h)) + 1e-3


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    k = [3, 5, 4][seed % 3]
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [128, 256, 192][seed % 3]
    steps = 250

    x, z = _make_data(g, bs * steps)

    torch.manual_seed(seed)
    model = MDN(x.shape[1], width, depth, k)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, target):
        logit_pi, mu, sigma = out
        log_pi = F.log_softmax(logit_pi, dim=1)
        t = target[:, None]
        log_n = -0.5 * ((t - mu) / sigma) ** 2 - torch.log(sigma) - 0.5 * math.log(2 * math.pi)
        return -torch.logsumexp(log_pi + log_n, dim=1).mean()

    batches = [(x[i * bs:(i + 1) * bs], z[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
