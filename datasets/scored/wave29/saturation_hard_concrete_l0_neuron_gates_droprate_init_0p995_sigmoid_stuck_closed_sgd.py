"""Structured pruning of a tabular fault classifier with L0 regularisation (Louizos,
Welling & Kingma 2018): every hidden unit is multiplied by a hard-concrete gate
z = clamp(sigmoid((log u - log(1-u) + log_alpha)/beta) * (zeta-gamma) + gamma, 0, 1),
and the loss is cross-entropy + lambda * expected number of open gates.  SGD+momentum.

Mechanism: the gate parameters are initialised from ``droprate_init``, log_alpha =
log(1-d) - log(d).  The config used d = 0.995 ("start almost fully pruned and let the task
open what it needs"), i.e. log_alpha ~ -5.3.  Divided by beta = 2/3 the sigmoid's
pre-activation is about -8 +- the logistic noise, so the sigmoid is deep in its flat tail,
the stretched value is below 0 and the clamp returns exactly 0 for ~97% of the gate samples.
Clamped samples pass exactly 0 gradient to log_alpha and to the unit
they gate; the ~2-3% that land inside (0, 1) give a few sparse, noisy gradient
contributions that SGD averages away.  The L0 penalty keeps pushing log_alpha down.  The
gates never open, the classifier sees (almost) no hidden features, and the loss stays at
the class-prior level for the whole run: a stall with finite values.

ORIGIN: ``gate1`` -- the first layer of hard-concrete gates, whose sigmoid is saturated
from step 0 and which blocks the signal for everything after it.

Fix: droprate_init = 0.5 (log_alpha ~ 0, the reference default), i.e. the gate sigmoid
starts at small pre-activations; same model, lambda, data, optimiser and steps.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "gate1"
SOURCE = ("Louizos et al. 2018 'Learning sparse neural networks through L0 regularization' "
          "(AMLab L0_regularization reference code, droprate_init); known pattern: gates "
          "initialised nearly closed saturate the concrete sigmoid and never receive gradient")

BETA, GAMMA, ZETA = 2.0 / 3.0, -0.1, 1.1


class HardConcreteGate(nn.Module):
    def __init__(self, n, droprate_init, seed):
        super().__init__()
        mu = math.log(1 - droprate_init) - math.log(droprate_init)
        self.log_alpha = nn.Parameter(mu + 0.01 * torch.randn(n))
        self.gen = torch.Generator().manual_seed(seed)

    def forward(self, h):
        if self.training:
            u = torch.rand(h.shape, generator=self.gen).clamp(1e-6, 1 - 1e-6)
            s = torch.sigmoid((torch.log(u) - torch.log(1 - u) + self.log_alpha) / BETA)
        else:
            s = torch.sigmoid(self.log_alpha)
        z = torch.clamp(s * (ZETA - GAMMA) + GAMMA, 0.0, 1.0)
        return h * z

    def expected_l0(self):
        return torch.sigmoid(self.log_alpha - BETA * math.log(-GAMMA / ZETA)).sum()


class L0MLP(nn.Module):
    def __init__(self, n_in, width, n_cls, d_init, seed):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(n_in, width), nn.Linear(width, width)
        self.gate1 = HardConcreteGate(width, d_init, seed)
        self.gate2 = HardConcreteGate(width, d_init, seed + 1)
        self.out = nn.Linear(width, n_cls)

    def forward(self, x):
        h = self.gate1(F.relu(self.fc1(x)))
        h = self.gate2(F.relu(self.fc2(h)))
        return self.out(h), self.gate1.expected_l0() + self.gate2.expected_l0()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(12000 + seed)
    n_in, n_cls = 30, 5
    width = [128, 96, 192][seed % 3]
    lr = [0.05, 0.08, 0.04][seed % 3]
    bs = [128, 64, 96][seed % 3]
    lam = [1e-3, 5e-4, 1e-3][seed % 3]
    d_init = 0.5 if fixed else 0.995
    steps = 200

    w = torch.randn(n_in, n_cls, generator=g) / math.sqrt(n_in)
    v = torch.randn(n_in, n_cls, generator=g) / math.sqrt(n_in)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n_in, generator=g)
        logits = 3.0 * (x @ w) + 2.0 * torch.relu(x @ v)
        y = torch.distributions.Categorical(logits=logits).sample()
        batches.append((x, y))

    torch.manual_seed(seed)
    model = L0MLP(n_in, width, n_cls, d_init, seed)

    def loss_fn(out, y):
        logits, l0 = out
        return F.cross_entropy(logits, y) + lam * l0

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
