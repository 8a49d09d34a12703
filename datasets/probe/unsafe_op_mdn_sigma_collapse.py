"""Multimodal trajectory MDN whose hand-written Gaussian density collapses as sigma -> 0.

Mechanism
---------
A small MLP predicts a K-mode mixture over a future trajectory of P 2-D points
(D = 2P = 24..32 output dims): mixture logits, means and per-dimension sigmas
``sigma = exp(log_sigma)``.  The future manoeuvre (left / straight / right arc)
is not observable from the input, so the target is genuinely multimodal, while
the within-mode noise is tiny (0.004-0.008).  The density module evaluates the
likelihood literally, in probability space:

    pdf_k = exp(-0.5 * sum_d z_kd^2) / (prod_d sigma_kd * (2 pi)^(D/2))
    nll   = -log(sum_k pi_k * pdf_k)

At init sigma ~ 1 and the loss is ~ +25..35; maximum likelihood then shrinks
the sigmas toward the tiny noise level (mean log_sigma falls by ~0.08 per step
with Adam, from 0 to ~-2.5 by step ~30, faster than the means converge) and the loss falls steadily and turns
negative -- a healthy-looking curve for ~25-40 steps.  But in probability space
every factor of the density is exponential in D:

* ``exp(-0.5 * sum_d z^2)`` underflows to exactly 0 once a training point is
  more than sqrt(2*104) ~ 14.4 "sigmas" (Mahalanobis norm over all D dims)
  from every mode.  With sigmas already ~0.06-0.09 (sum_d log_sigma ~ -77 at the
  failing step) and means still off by a few hundredths on 24-32 dims, this
  happens around step 25-40: sum_k pi_k pdf_k == 0 and ``-log(0) = +inf``
  (measured: min_k z^2 ~ 220-230 for the worst point of the failing batch);
  when the sum is merely subnormal instead, the forward is finite but the
  backward's ``1/sum`` is inf and ``inf * 0`` gives NaN gradients (seed 0).
* a few steps later ``prod_d sigma_kd`` itself would underflow to 0
  (sum log sigma < -103), making ``pdf = x / 0 = inf``.

The shrinking sigma is what drives the run into the underflow; the unsafe op is
``log`` of an underflowed probability-space density.

ORIGIN = "density": the module that holds the unsafe probability-space density
(product of sigmas / exp / log of the mixture sum).

fixed=True: the density module computes exactly the same log-likelihood in log
space -- ``logsumexp_k(log_softmax(pi)_k - 0.5 sum z^2 - sum log_sigma -
D/2 log 2 pi)`` -- with the same model, data, optimizer and lr.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "density"
SOURCE = ("Hand-rolled MDN losses for multi-dimensional outputs (trajectory / pose "
          "prediction) computing the Gaussian pdf as exp(.)/prod(sigma) and log(sum(pi*pdf)); "
          "'MDN loss becomes -inf/nan' reports (e.g. hardmaru/pytorch-mdn, "
          "sagelywizard/pytorch-mdn issues) fixed by logsumexp / log-space likelihood")


class MixtureDensity(nn.Module):
    def __init__(self, k, d, log_space: bool):
        super().__init__()
        self.k, self.d, self.log_space = k, d, log_space

    def forward(self, params, y):
        b = params.shape[0]
        pi_logits = params[:, :self.k]
        mu = params[:, self.k:self.k + self.k * self.d].view(b, self.k, self.d)
        log_sigma = params[:, self.k + self.k * self.d:].view(b, self.k, self.d)
        sigma = log_sigma.exp()
        z2 = (((y[:, None, :] - mu) / sigma) ** 2).sum(-1)          # (b, k)
        if self.log_space:
            logp = (F.log_softmax(pi_logits, -1) - 0.5 * z2 - log_sigma.sum(-1)
                    - 0.5 * self.d * math.log(2 * math.pi))
            return -torch.logsumexp(logp, -1)
        pi = F.softmax(pi_logits, -1)
        pdf = torch.exp(-0.5 * z2) / (sigma.prod(-1) * (2 * math.pi) ** (self.d / 2))
        return -torch.log((pi * pdf).sum(-1))


class TrajectoryMDN(nn.Module):
    def __init__(self, n_in, hidden, k, d, log_space):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(),
                                   nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, k + 2 * k * d)
        self.density = MixtureDensity(k, d, log_space)

    def forward(self, x, y):
        return self.density(self.head(self.trunk(x)), y)


def make_batch(g, bs, n_pts, noise):
    speed = 0.5 + torch.rand(bs, 1, generator=g)                 # m / step
    turn_rate = 0.1 + 0.1 * torch.rand(bs, 1, generator=g)       # curvature magnitude
    mode = torch.randint(0, 3, (bs, 1), generator=g).float() - 1  # hidden: -1, 0, +1
    kappa = mode * turn_rate + 1e-4
    s = speed * 0.25 * torch.arange(1, n_pts + 1).float()[None]   # arc length
    px = torch.sin(kappa * s) / kappa
    py = (1 - torch.cos(kappa * s)) / kappa
    y = torch.stack([px, py], -1).reshape(bs, -1) / (0.25 * n_pts)   # normalised to ~[0, 1.5]
    y = y + noise * torch.randn(y.shape, generator=g)
    x = torch.cat([speed, turn_rate * 5, 0.1 * torch.randn(bs, 4, generator=g)], 1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(2000 + seed)
    steps = 300
    n_pts = [12, 16, 14][seed % 3]
    noise = [0.005, 0.008, 0.004][seed % 3]
    bs = [64, 48, 80][seed % 3]
    batches = []
    for _ in range(steps):
        x, y = make_batch(g, bs, n_pts, noise)
        batches.append(((x, y), y))
    torch.manual_seed(seed)
    k = [3, 4, 3][seed % 3]
    model = TrajectoryMDN(6, [64, 96, 64][seed % 3], k, 2 * n_pts, log_space=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=[2e-3, 1.5e-3, 2e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: out.mean(),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
