"""fp16_overflow: the exp(scale) of an affine coupling layer overflows float16 on a multi-scale
density.

Mechanism: a RealNVP-style normalizing flow (affine coupling layers ``z_b = x_b * exp(s(x_a)) +
t(x_a)``, log-det ``sum s``, standard-normal base; negative log-likelihood, Adam) is fitted to
posterior draws of a small hierarchical model: a group scale tau with a log-uniform (Jeffreys)
prior spanning five to seven orders of magnitude, and m group effects ``theta_i ~ N(0, tau^2)``.
The draws are stored as ``u`` (log tau, standardised to unit variance) and the raw thetas, so
every feature is O(1) or smaller: nothing is unscaled. The first coupling transforms the thetas
conditioned on u, the second transforms u conditioned on the (now whitened) thetas. To whiten
the thetas the first coupling must learn ``s(u) = -log tau``, up to 13-16 at the small-tau end
of the prior; the likelihood pushes it there steadily (the log-det term rewards every unit of
scale until ``theta * exp(s)`` is O(1)). Training runs under ``torch.autocast(float16)`` with a
GradScaler, the usual AMP recipe. On the CPU autocast runs the conditioner's Linear layers in
float16, so ``s`` is float16 and ``torch.exp(s)`` is float16, whose largest finite value is 65504:
as soon as the conditioner's ``s`` passes log(65504) = 11.09 for the smallest-tau draws of a
batch (14-29% of the prior mass, depending on the seed's range, lies there), exp(s) is inf,
``z = theta * inf`` is
inf and the loss is inf / NaN. ``s`` itself is finite (11-12) and its optimum is a legitimate
finite value; in float32 exp(16) = 9e6 is unremarkable. The GradScaler cannot help: it scales
gradients, not forward activations. Seeds change the number of thetas, the prior's range, the
conditioner's width and depth, the batch, the lr and so the failing step.

ORIGIN: ``couplings.0``, the coupling layer whose float16 exp(s) overflows (its conditioner
``couplings.0.net`` outputs finite s; the inf is born in the coupling's own forward).
Fixed: the same run with the coupling's exp(s) (and the affine update using it) computed in
float32 (autocast disabled there and s upcast), the "fp32 for the op" fix; the flow's function
is unchanged and the rest still runs under float16 autocast.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "couplings.0"
SOURCE = (
    "RealNVP/Glow affine couplings (Dinh et al. 2017) trained with torch.autocast float16: "
    "nflows / normflows / FrEIA issues and forum threads 'flow loss becomes inf/NaN with AMP "
    "but not in fp32' where exp(log_scale) exceeds 65504; fitting flows to funnel-shaped "
    "hierarchical posteriors (neural posterior estimation, log-uniform scale priors) needs "
    "scales above e^11. Fix: compute the scale/exp in float32 (or bf16)."
)


class AffineCoupling(nn.Module):
    """z[trans] = x[trans] * exp(s) + t with (s, t) = net(x[cond]); returns (z, log-det)."""

    def __init__(self, cond: list[int], trans: list[int], width: int, depth: int,
                 fp32_exp: bool) -> None:
        super().__init__()
        self.cond, self.trans = cond, trans
        self.fp32_exp = fp32_exp
        layers: list[nn.Module] = []
        d_in = len(cond)
        for _ in range(depth):
            layers += [nn.Linear(d_in, width), nn.ReLU()]
            d_in = width
        layers.append(nn.Linear(d_in, 2 * len(trans)))
        self.net = nn.Sequential(*layers)
        with torch.no_grad():  # start at the identity map, as RealNVP/Glow do
            self.net[-1].weight.mul_(0.1)
            self.net[-1].bias.zero_()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, t = self.net(x[:, self.cond]).chunk(2, dim=-1)
        xb = x[:, self.trans]
        if self.fp32_exp:
            with torch.autocast(device_type="cpu", enabled=False):
                zb = xb.float() * torch.exp(s.float()) + t.float()
        else:
            zb = xb * torch.exp(s) + t  # exp is float16 under autocast: inf past s = 11.09
        z = x.clone()
        z[:, self.trans] = zb.to(z.dtype)
        return z, s.float().sum(-1)


class CouplingFlow(nn.Module):
    def __init__(self, m: int, width: int, depth: int, fp32_exp: bool) -> None:
        super().__init__()
        u, thetas = [0], list(range(1, m + 1))
        self.couplings = nn.ModuleList([
            AffineCoupling(u, thetas, width, depth, fp32_exp),  # thetas | u
            AffineCoupling(thetas, u, width, depth, fp32_exp),  # u | thetas
        ])

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logdet = torch.zeros(x.shape[0])
        for layer in self.couplings:
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet


class FlowNLL(nn.Module):
    def forward(self, out: tuple[torch.Tensor, torch.Tensor], y: torch.Tensor) -> torch.Tensor:
        z, logdet = out
        z = z.float()
        log_pz = -0.5 * (z * z).sum(-1) - 0.5 * z.shape[1] * math.log(2 * math.pi)
        return -(log_pz + logdet).mean()


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    m = rng.choice([2, 3, 4])  # group effects
    log_tau_min = rng.choice([-13.0, -14.0, -16.0])  # log-uniform prior on tau in [e^min, e^1]
    width = rng.choice([32, 48, 64])
    depth = rng.choice([2, 3])
    batch = rng.choice([128, 192, 256])
    steps = rng.choice([150, 180, 200])
    lr = rng.choice([1e-3, 1.5e-3, 2e-3])

    g = torch.Generator().manual_seed(540_000 + seed)
    n = steps * batch
    log_tau = log_tau_min + (1.0 - log_tau_min) * torch.rand(n, 1, generator=g)
    theta = torch.exp(log_tau) * torch.randn(n, m, generator=g)
    u = (log_tau - log_tau.mean()) / log_tau.std()
    data = torch.cat([u, theta], 1)
    batches = [(data[i * batch:(i + 1) * batch], torch.zeros(batch)) for i in range(steps)]

    torch.manual_seed(seed)
    model = CouplingFlow(m, width, depth, fp32_exp=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": FlowNLL(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.float16,
        "scaler": scaler,
    }
