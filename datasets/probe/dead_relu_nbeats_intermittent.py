"""dead_relu: an N-BEATS forecaster (generic basis: 3 residual blocks of 4 FC+ReLU layers, each
emitting a backcast and a forecast; forecasts summed) for intermittent retail demand, with a ReLU
on the summed forecast to keep predicted demand non-negative. The output ReLU is dead from step 0.

Mechanism (dying ReLU, CS231n notes "a ReLU unit whose pre-activation is negative for every input
never activates again and passes zero gradient"; the bias-init recipe is Karpathy, "A Recipe for
Training Neural Networks": "init well", and the count-model / imbalanced-data tutorials that set
the final bias to log(mean) for a log-link/exp head): the forecast head's bias is initialised to
log(mean demand) = log(~0.44) = -0.82, a recipe meant for an exp/log-link output, but this head
uses an identity link followed by ReLU. The random part of the pre-activation is small (~0.1-0.3),
so the summed forecast is negative for every window; ReLU outputs 0 and its gradient is 0 for every
sample, so no parameter in the network ever gets a gradient. The loss sits at E[y^2] (predicting
zero demand) for all 250 steps while the hidden ReLUs themselves are healthy.

Data: per-series periodic intermittent demand (a demand of 1-3 units every 3-7 periods, zeros
otherwise); lookback 24, horizon 6; the timing is fully predictable from the lookback.

ORIGIN = "out_act": the output ReLU is the unit that is dead; every upstream layer only loses its
gradient because of it (the layer feeding it, blocks.2.theta, carries the bad bias).

fixed=True: the same ReLU head with the bias initialised for an identity link (the mean demand,
+0.44, instead of log(mean)); architecture, data, optimiser and lr unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = ("dying ReLU at a non-negativity output head: final bias initialised to log(mean) (log-link recipe) "
          "in front of a ReLU, so every pre-activation is negative and no gradient flows (CS231n dying-ReLU "
          "notes; Karpathy 'Recipe for Training Neural Networks' init-well advice); N-BEATS generic architecture")

L_IN, H_OUT, W = 24, 6, 64


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(L_IN, W), nn.ReLU(), nn.Linear(W, W), nn.ReLU(),
                                nn.Linear(W, W), nn.ReLU(), nn.Linear(W, W), nn.ReLU())
        self.theta = nn.Linear(W, L_IN + H_OUT)

    def forward(self, x):
        t = self.theta(self.fc(x))
        return t[:, :L_IN], t[:, L_IN:]


class NBeats(nn.Module):
    def __init__(self, n_blocks=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(n_blocks)])
        self.out_act = nn.ReLU()          # demand forecasts must be non-negative

    def forward(self, x):
        f = 0
        for b in self.blocks:
            bc, fc = b(x)
            x = x - bc
            f = f + fc
        return self.out_act(f)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    B, steps = 64, 250
    batches = []
    for _ in range(steps):
        per = torch.randint(3, 8, (B, 1), generator=g)
        ph = torch.randint(0, 8, (B, 1), generator=g)
        size = 1 + 2 * torch.rand(B, 1, generator=g)
        tt = torch.arange(L_IN + H_OUT)
        s = ((tt + ph) % per == 0).float() * size
        batches.append((s[:, :L_IN], s[:, L_IN:]))
    model = NBeats()
    mean_demand = float(torch.cat([b[1] for b in batches[:20]]).mean())   # ~0.44 units
    with torch.no_grad():
        for b in model.blocks:
            b.theta.bias[L_IN:].zero_()
        # bug: log-link recipe (bias = log(mean)) on an identity-link + ReLU head
        model.blocks[-1].theta.bias[L_IN:].fill_(mean_demand if fixed else math.log(mean_demand))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
