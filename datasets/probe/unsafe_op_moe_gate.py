"""unsafe_op: a mixture-of-experts router takes log of softmax gate probabilities that underflow
to 0.

Mechanism: a small mixture-of-experts regressor (a shared ReLU trunk, then E expert MLPs mixed by
a softmax router, then the mixed output) is fitted to data drawn from a few regimes, each with its
own linear response, so routing each regime to its own expert is what the task wants. The router
follows the "soft-to-hard" recipe: its logits are divided by a temperature that is annealed
geometrically from about 1 towards a small floor (0.02-0.05) over the first part of the run, and
an entropy penalty on the gate distribution (``lam * H(p)``, the sharpening term that rewards
confident routing) is added to the task MSE through the model's auxiliary output. The router
computes that entropy the textbook way, ``-(p * torch.log(p)).sum(-1)`` with
``p = softmax(z / tau)``. Everything is calm: the MSE falls, the gate sharpens, the logits are
finite and moderate (raw router gaps of 5-15). But as tau falls, the scaled gap between a
token's preferred and least-preferred expert passes ~103 and that probability underflows to
exactly 0.0 in float32; ``log(0) = -inf`` and ``0 * -inf = NaN``, so the entropy, the loss and
(through the backward of log, a 0/0) every gradient are NaN at once. Seeds change the trunk and
expert widths, the number of experts and regimes, the batch, the lr, the schedule (start, floor,
length) and so the failing step.

ORIGIN: ``router``, the module that holds the naive ``log(softmax)``: its projection
``router.proj`` and the probabilities it returns are finite (some exactly 0), the NaN is born in
its entropy output. The trunk and experts are healthy.
Fixed: the same router computing the entropy from ``torch.log_softmax(z / tau, -1)`` (exact for
any logits, so ``0 * finite = 0``); the probabilities, the schedule and everything else are
unchanged.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "router"
SOURCE = (
    "Soft mixture-of-experts / temperature-annealed softmax routing with an entropy "
    "(sharpening) regulariser, written as -(p * p.log()).sum(-1): the '0 * log(0) = NaN' "
    "pattern reported in PyTorch forum and GitHub threads on entropy of Categorical/softmax "
    "outputs (torch.distributions.Categorical.entropy clamps logits for this reason), fixed with "
    "log_softmax or an epsilon."
)


class Router(nn.Module):
    """Softmax gate with an annealed temperature; returns (probs, gate entropy)."""

    def __init__(self, width: int, experts: int, tau0: float, tau_min: float, anneal: int,
                 fused: bool) -> None:
        super().__init__()
        self.proj = nn.Linear(width, experts)
        self.tau0, self.tau_min, self.anneal = tau0, tau_min, anneal
        self.fused = fused
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def temperature(self) -> float:
        frac = min(1.0, float(self.calls) / self.anneal)
        return self.tau0 * (self.tau_min / self.tau0) ** frac

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.proj(h) / self.temperature()
        if self.training:
            self.calls += 1
        p = torch.softmax(z, dim=-1)
        # the naive log is -inf where p underflowed to 0.0
        logp = torch.log_softmax(z, dim=-1) if self.fused else torch.log(p)
        entropy = -(p * logp).sum(-1).mean()
        return p, entropy


class MoERegressor(nn.Module):
    def __init__(self, d: int, width: int, hidden: int, experts: int, router: Router) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d, width), nn.ReLU())
        self.router = router
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, 1))
            for _ in range(experts)
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(x)
        p, entropy = self.router(h)
        outs = torch.stack([e(h) for e in self.experts], dim=1)  # (B, E, 1)
        return (p.unsqueeze(-1) * outs).sum(1), entropy


class MoELoss(nn.Module):
    def __init__(self, lam: float) -> None:
        super().__init__()
        self.lam = lam

    def forward(self, out: tuple[torch.Tensor, torch.Tensor], y: torch.Tensor) -> torch.Tensor:
        pred, entropy = out
        return nn.functional.mse_loss(pred, y) + self.lam * entropy


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d = rng.choice([8, 12, 16])
    width = rng.choice([32, 48, 64])
    hidden = rng.choice([16, 24, 32])
    regimes = rng.choice([3, 4, 5])
    experts = regimes + rng.choice([0, 1, 2])
    batch = rng.choice([48, 64, 96])
    steps = rng.choice([140, 160, 180])
    lr = rng.choice([3e-3, 5e-3, 1e-2])
    lam = rng.choice([0.02, 0.05, 0.1])
    tau0 = rng.choice([1.0, 1.5])
    tau_min = rng.choice([0.02, 0.03, 0.05])
    anneal = int(steps * rng.choice([0.5, 0.6, 0.7]))

    g = torch.Generator().manual_seed(510_000 + seed)
    centers = 1.5 * torch.randn(regimes, d, generator=g)
    maps = torch.randn(regimes, d, generator=g) / d**0.5
    bias = torch.randn(regimes, generator=g)
    batches = []
    for _ in range(steps):
        k = torch.randint(0, regimes, (batch,), generator=g)
        x = centers[k] + torch.randn(batch, d, generator=g)
        y = (x * maps[k]).sum(-1, keepdim=True) + bias[k].unsqueeze(-1)
        y = y + 0.05 * torch.randn(batch, 1, generator=g)
        batches.append((x, y))

    torch.manual_seed(seed)
    router = Router(width, experts, tau0, tau_min, anneal, fused=fixed)
    model = MoERegressor(d, width, hidden, experts, router)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": MoELoss(lam),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
