"""HEALTHY: deep evidential regression (Amini et al. 2020; Soleimany et al. 2021 for
molecules) of a molecular property from ECFP-style Morgan fingerprints with an MLP that
outputs the Normal-Inverse-Gamma parameters (gamma, nu, alpha, beta).

Why it looks alarming but is fine
---------------------------------
* The NIG negative log-likelihood is a *density* NLL: once the predicted aleatoric and
  epistemic variances become small it crosses zero (low-noise settings end around -0.2 to
  -0.5 nats and are still falling) -- it is not a sign flip or a bug.
* Inputs are sparse binary bits (~5% set): a large share of first-layer ReLUs output zero
  for any given molecule and many weights get exactly-zero gradients on a batch.
* nu, alpha and beta come out of softplus heads whose raw values drift strongly negative
  and positive; the evidence regulariser lambda * |y - gamma| * (2 nu + alpha) makes the loss
  noisy from batch to batch.
Everything stays finite and the loss decreases steadily; the fixed run is identical.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Deep Evidential Regression (Amini et al., NeurIPS 2020) and evidential deep "
          "learning for molecular property prediction (Soleimany et al., ACS Cent. Sci. "
          "2021) on Morgan fingerprints")


class EvidentialMLP(nn.Module):
    def __init__(self, n_bits, hidden):
        super().__init__()
        layers, d = [], n_bits
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        o = self.head(self.body(x))
        gamma = o[:, 0]
        nu = F.softplus(o[:, 1]) + 1e-6
        alpha = F.softplus(o[:, 2]) + 1.0 + 1e-6
        beta = F.softplus(o[:, 3]) + 1e-6
        return gamma, nu, alpha, beta


def _make_loss(lam):
    def loss_fn(out, y):
        gamma, nu, alpha, beta = out
        omega = 2.0 * beta * (1.0 + nu)
        nll = (0.5 * torch.log(math.pi / nu) - alpha * torch.log(omega)
               + (alpha + 0.5) * torch.log(nu * (y - gamma) ** 2 + omega)
               + torch.lgamma(alpha) - torch.lgamma(alpha + 0.5))
        reg = (y - gamma).abs() * (2.0 * nu + alpha)
        return (nll + lam * reg).mean()
    return loss_fn


def _fingerprints(g, n, n_bits, density):
    return (torch.rand(n, n_bits, generator=g) < density).float()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(bits=512, hidden=(256, 128), B=64, lr=1e-3, lam=0.01, steps=150, noise=0.05),
           dict(bits=1024, hidden=(256, 256, 64), B=32, lr=5e-4, lam=0.05, steps=160, noise=0.1),
           dict(bits=256, hidden=(128,), B=96, lr=2e-3, lam=0.02, steps=120, noise=0.03)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(555 + seed)
    n_bits = cfg["bits"]
    # group-contribution style ground truth: substructure increments + a few pair terms
    w = torch.randn(n_bits, generator=g) * (0.9 / math.sqrt(n_bits * 0.05))
    pairs = torch.randint(0, n_bits, (16, 2), generator=g)
    model = EvidentialMLP(n_bits, cfg["hidden"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for _ in range(cfg["steps"]):
        x = _fingerprints(g, cfg["B"], n_bits, 0.05)
        y = x @ w + 0.5 * (x[:, pairs[:, 0]] * x[:, pairs[:, 1]]).sum(1)
        y = y + cfg["noise"] * torch.randn(cfg["B"], generator=g)
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=_make_loss(cfg["lam"]), batches=batches,
                steps=cfg["steps"])
