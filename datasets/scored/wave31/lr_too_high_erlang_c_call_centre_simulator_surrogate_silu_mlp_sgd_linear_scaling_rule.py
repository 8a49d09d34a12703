"""Surrogate of a call-centre queueing simulator: SiLU MLP mapping (arrival rate, handle time,
agents, patience, shrinkage) to the log mean speed-of-answer, used inside a staffing optimiser.

Mechanism: the training recipe was written for batch 32 with SGD(momentum=0.9, nesterov) at
lr = 0.03. For the surrogate the practitioner samples big batches of simulator runs and applies the
linear scaling rule lr = 0.03 * batch / 32 (-> 0.3..0.48) with no warmup. With momentum 0.9 the
effective step is ~10x that, far beyond 2 / (largest curvature) of this MSE problem: the first
updates already overshoot, each step multiplies the error instead of shrinking it, weights grow
geometrically and the loss overflows to inf / NaN within tens of steps.

ORIGIN: None -- the step size is global; no single module starts it.

Fix: keep the base lr 0.03 (the linear scaling rule dropped); model,
data, batch size and steps unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Goyal et al. 'Accurate, Large Minibatch SGD' (2017) linear scaling rule, which needs warmup "
          "and breaks down at large lr; Koole's Erlang-C staffing formulas as the simulator model")


def _erlang_c_wait(lam, aht, agents):
    a = lam * aht                                          # offered load (Erlangs)
    rho = (a / agents).clamp(max=0.98)
    a = rho * agents
    n = int(agents.max())
    k = torch.arange(n).float()
    terms = torch.exp(k.unsqueeze(0) * torch.log(a.unsqueeze(1)) - torch.lgamma(k + 1).unsqueeze(0))
    terms = terms * (k.unsqueeze(0) < agents.unsqueeze(1)).float()
    last = torch.exp(agents * torch.log(a) - torch.lgamma(agents + 1)) / (1 - rho)
    pc = last / (terms.sum(1) + last)                       # probability of waiting
    return pc * aht / (agents - a)                          # mean speed of answer


def _runs(g, bs):
    agents = torch.randint(5, 40, (bs,), generator=g).float()
    aht = torch.rand(bs, generator=g) * 8 + 2              # minutes
    rho = torch.rand(bs, generator=g) * 0.45 + 0.5
    lam = rho * agents / aht                               # calls per minute
    patience = torch.rand(bs, generator=g) * 10 + 1
    shrink = torch.rand(bs, generator=g) * 0.3
    eff_agents = (agents * (1 - shrink)).round().clamp(min=2)
    w = _erlang_c_wait(lam, aht, eff_agents)
    w = w * torch.exp(-w / (3 * patience))                 # abandonment trims the long waits
    x = torch.stack([(lam - 3) / 2.5, (aht - 6) / 2.3, (agents - 22) / 10, (patience - 6) / 3,
                     (shrink - 0.15) / 0.09], 1)
    y = torch.log(w + 0.05)
    return x, (y + 0.8) / 1.4


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [128, 96, 64][seed % 3]
    depth = [3, 2, 4][seed % 3]
    bs = [384, 320, 512][seed % 3]
    base_lr = 0.03
    lr = base_lr if fixed else base_lr * bs / 32             # linear scaling rule, no warmup
    steps = 120
    torch.manual_seed(seed)
    layers, d = [], 5
    for _ in range(depth):
        layers += [nn.Linear(d, h), nn.SiLU()]
        d = h
    model = nn.Sequential(*layers, nn.Linear(d, 1), nn.Flatten(0))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    batches = [_runs(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
