"""Zero-inflated Poisson (ZIP) catch model for bottom-trawl survey hauls with a hand-written
likelihood that takes log(1 - pi) of a sigmoid probability; pi rounds to exactly 1.0 in the
structural-zero habitat and log(1 - pi) = log(0) poisons the backward pass.

Mechanism: a groundfish survey model predicts per-haul catch counts from depth, bottom
temperature, substrate, season and swept area.  An MLP trunk feeds a log-rate head and a
zero-inflation head whose output goes through ``nn.Sigmoid()`` to give pi = P(structural
zero).  The likelihood is coded from the textbook formula and vectorised with torch.where:
``log(pi + (1 - pi) * exp(-lam))`` for zero catches and ``log(1 - pi) + y log lam - lam -
lgamma(y + 1)`` for positive ones.  Deep hauls (beyond the species' range) are always empty,
so Adam keeps pushing their zero-inflation logit up; within a few dozen steps it passes ~17
and sigmoid returns exactly 1.0 in float32.  The loss value itself is still finite (torch.where
selects the zero-catch branch for those hauls), but the positive-catch branch is evaluated for
every haul: log(1 - 1.0) = -inf there, and its backward multiplies the zero upstream gradient
by 1/(1 - pi) = inf, giving 0 * inf = NaN in the zero-inflation head's gradient.  Adam writes
the NaN into the weights and every later loss is NaN.

ORIGIN: ``zi_gate`` -- the sigmoid whose output saturates to exactly 1.0 and is then fed to
log(1 - pi); the unsafe op sits right after it.

Fix: keep the zero-inflation head in logit space (``zi_gate`` becomes Identity) and write the
likelihood with fused, stable ops: log(1 - pi) = logsigmoid(-z), log(pi) = logsigmoid(z),
log(pi + (1-pi) e^-lam) = logaddexp(logsigmoid(z), logsigmoid(-z) - lam).  Same data, model,
optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "zi_gate"
SOURCE = ("Zero-inflated Poisson models for trawl-survey catch data (e.g. Martin et al. 2005 Ecology "
          "Letters 'Zero tolerance ecology'); 'NaN gradient with torch.where' (pytorch/pytorch "
          "issue #68425 and forum threads) combined with log(1 - sigmoid) in hand-written ZIP / "
          "hurdle likelihoods; stable logsigmoid formulation.")


class ZIPNet(nn.Module):
    def __init__(self, fin, hidden, depth, fixed):
        super().__init__()
        layers, d = [], fin
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.SiLU()]
            d = hidden
        self.trunk = nn.Sequential(*layers)
        self.rate_head = nn.Linear(hidden, 1)
        self.zi_head = nn.Linear(hidden, 1)
        self.zi_gate = nn.Identity() if fixed else nn.Sigmoid()

    def forward(self, x):
        h = self.trunk(x)
        return torch.cat([self.zi_gate(self.zi_head(h)), self.rate_head(h)], dim=-1)


def zip_nll_naive(out, y):
    pi, log_lam = out[:, 0], out[:, 1]
    lam = log_lam.exp()
    ll_zero = torch.log(pi + (1 - pi) * torch.exp(-lam))
    ll_pos = torch.log(1 - pi) + y * log_lam - lam - torch.lgamma(y + 1)
    return -torch.where(y == 0, ll_zero, ll_pos).mean()


def zip_nll_stable(out, y):
    z, log_lam = out[:, 0], out[:, 1]
    lam = log_lam.exp()
    ll_zero = torch.logaddexp(F.logsigmoid(z), F.logsigmoid(-z) - lam)
    ll_pos = F.logsigmoid(-z) + y * log_lam - lam - torch.lgamma(y + 1)
    return -torch.where(y == 0, ll_zero, ll_pos).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(151 + seed)
    torch.manual_seed(seed)
    hidden = [64, 48, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    batch = [256, 192, 320][seed % 3]
    lr = [1e-2, 8e-3, 1.2e-2][seed % 3]
    steps = 200

    n = steps * batch
    depth_m = torch.rand(n, generator=g) * 600 + 20                    # 20-620 m
    temp = 10 - depth_m / 80 + torch.randn(n, generator=g)
    substrate = torch.randint(0, 3, (n,), generator=g)
    season = torch.rand(n, generator=g) * 2 * torch.pi
    effort = 0.8 + 0.4 * torch.rand(n, generator=g)                     # swept area, km^2
    x = torch.stack([(depth_m - 320) / 170, (temp - 6) / 2.5, substrate.float() - 1,
                     torch.sin(season), torch.cos(season), (effort - 1) / 0.12], dim=1)
    deep = depth_m > 350                                               # outside the species' range
    log_lam = 1.2 + 0.4 * (temp - 6) / 2.5 + 0.5 * (substrate == 2).float() + 0.3 * torch.sin(season) \
        + torch.log(effort)
    counts = torch.poisson(log_lam.exp(), generator=g)
    occupied = torch.rand(n, generator=g) > 0.25                       # patchy occupancy on the shelf
    counts = torch.where(deep | ~occupied, torch.zeros_like(counts), counts)

    batches = [(x[i * batch:(i + 1) * batch], counts[i * batch:(i + 1) * batch]) for i in range(steps)]

    model = ZIPNet(x.shape[1], hidden, depth, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": zip_nll_stable if fixed else zip_nll_naive,
            "batches": batches, "steps": steps}
