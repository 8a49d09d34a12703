"""Muon-track direction reconstruction for an IceCube-like detector: a Deep-Sets network (per-hit
MLP on DOM position, hit time and log charge, mean-pooled, then an MLP that also takes the
LineFit first-guess direction) outputs a unit direction mu and a concentration kappa = exp(.);
the loss is the von Mises-Fisher negative log-likelihood on the sphere, written out by hand:
-log kappa + log(sinh kappa) + log(4 pi) - kappa * mu . d.  Adam.

Mechanism: the vMF normaliser is coded literally as ``torch.log(torch.sinh(kappa))``.  While the
network is uncertain kappa is O(1-10) and everything is calm.  As the predicted directions
approach the truth (errors of a few degrees) the likelihood rewards kappa ~ 1 / sigma^2 > 100, but
sinh overflows float32 above kappa ~ 89.4: sinh(kappa) = inf, log(inf) = inf and the loss (and the
gradients, inf - inf) become non-finite, although every individual quantity is well defined.

ORIGIN: ``head``, the output MLP that produces kappa; the overflowing sinh is in the loss (not a
module) and kappa is the value that reaches it.

Fix: the numerically stable form log(sinh k) = k + log1p(-exp(-2k)) - log 2 (the standard
log-normaliser used by vMF losses, e.g. GraphNeT's), same model, data, optimiser and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "head"
SOURCE = ("von Mises-Fisher direction loss with a naive log(sinh(kappa)) (GraphNeT VonMisesFisherLoss "
          "implements a stable log C_p for exactly this reason; PyTorch forum 'sinh overflow nan'); "
          "IceCube LineFit first-guess (Aartsen et al. 2014)")


def _event(g, n_hits):
    d = torch.randn(3, generator=g)
    d = d / d.norm()
    v = (torch.rand(3, generator=g) - 0.5) * 400
    s = torch.sort((torch.rand(n_hits, generator=g) - 0.5) * 900).values
    pos = v + s[:, None] * d + 15 * torch.randn(n_hits, 3, generator=g)      # m
    t = s / 0.2998 + 8 * torch.randn(n_hits, generator=g).abs()               # ns
    q = torch.exp(-(pos - v - s[:, None] * d).norm(dim=1) / 30) * 5 + 0.3 * torch.rand(n_hits, generator=g)
    # LineFit: least-squares velocity of hit positions vs time
    tc, pc = t - t.mean(), pos - pos.mean(0)
    lf = (pc * tc[:, None]).sum(0) / (tc * tc).sum()
    lf = lf / lf.norm()
    hits = torch.cat([pos / 500.0, (t - t.mean())[:, None] / 1500.0, torch.log1p(q)[:, None]], 1)
    return hits, lf, d


class DeepSetsVMF(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers, d = [], 5
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.phi = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(width + 3, width), nn.ReLU(), nn.Linear(width, 4))

    def forward(self, hits, linefit):
        pooled = self.phi(hits).mean(1)
        out = self.head(torch.cat([pooled, linefit], 1))
        mu = linefit + out[:, :3]
        mu = mu / mu.norm(dim=1, keepdim=True)
        kappa = torch.exp(out[:, 3])
        return mu, kappa


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 96, 128][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 48, 96][seed % 3]
    n_hits = 24
    steps = 200

    ev = [_event(g, n_hits) for _ in range(bs * steps)]
    hits = torch.stack([e[0] for e in ev])
    lf = torch.stack([e[1] for e in ev])
    d = torch.stack([e[2] for e in ev])

    torch.manual_seed(seed)
    model = DeepSetsVMF(width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def log_sinh(k):
        if fixed:
            return k + torch.log1p(-torch.exp(-2 * k)) - math.log(2.0)
        return torch.log(torch.sinh(k))

    def loss_fn(out, target):
        mu, kappa = out
        nll = -torch.log(kappa) + log_sinh(kappa) + math.log(4 * math.pi) \
            - kappa * (mu * target).sum(1)
        return nll.mean()

    batches = [((hits[i * bs:(i + 1) * bs], lf[i * bs:(i + 1) * bs]), d[i * bs:(i + 1) * bs])
               for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
