"""Monotonic learned cost model for a query operator (scan/join latency as a function of the
log-selectivities of its predicates and the log fractions of the table that are cached /
clustered).  To guarantee that the predicted cost never decreases when a selectivity grows,
the author uses the classic monotonic-network construction: every weight is made
non-negative (``w.abs()``) and the activations are monotone (ReLU).  Loss: L1 on the
standardised log latency, Adam.

Mechanism: all inputs are log-fractions, i.e. <= 0 (median around -3).  With non-negative
first-layer weights the pre-activation of every hidden unit is  sum_j |w_ij| x_j + b_i <= b_i,
and with the default initialisation this is below zero for essentially every query: the ReLUs
of the first layer are dead from the first batch on.  Dead units pass no gradient to their
weights or biases, so they never come back; the later layers only see the few rows with
selectivity ~1, and the model is stuck at predicting roughly the median latency -- a flat
loss, no NaN.

ORIGIN: ``layers.0`` -- the first monotone Linear is where the pre-activations are pushed
below zero (the ReLU after it is where they die; later layers are merely starved).

Fix: LeakyReLU(0.1) instead of ReLU (still monotone increasing, so the monotonicity guarantee
holds) -- negative pre-activations keep a gradient and the biases can move them up; same
weights, data, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "layers.0"
SOURCE = ("Monotonic networks with non-negative weights (Sill, NIPS 1998; 'Monotonic Cardinality "
          "Estimation of Similarity Selection', Wang et al. SIGMOD 2020); dying ReLU when all "
          "inputs are log-selectivities (<= 0) -- reported in monotone cost-model ports")


class MonoLinear(nn.Linear):
    def forward(self, x):
        return nn.functional.linear(x, self.weight.abs(), self.bias)


class MonotoneCostModel(nn.Module):
    def __init__(self, n_in, hidden, depth, leaky):
        super().__init__()
        dims = [n_in] + [hidden] * depth
        self.layers = nn.ModuleList([MonoLinear(dims[i], dims[i + 1]) for i in range(depth)])
        self.act = nn.LeakyReLU(0.1) if leaky else nn.ReLU()
        self.out = MonoLinear(hidden, 1)

    def forward(self, x):
        for layer in self.layers:
            x = self.act(layer(x))
        return self.out(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 128, 96][seed % 3]
    depth = [2, 1, 1][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 96, 128][seed % 3]
    steps = 150
    n_in = 8

    torch.manual_seed(seed)
    model = MonotoneCostModel(n_in, hidden, depth, leaky=fixed)
    coef = torch.rand(n_in, generator=g) + 0.2
    batches = []
    for _ in range(steps):
        # log-fractions: log selectivity of each predicate, log cached fraction, ...
        x = -torch.distributions.Exponential(1.0 / 3.0).sample((bs, n_in)) if False else \
            torch.log(torch.rand(bs, n_in, generator=g) ** 3 + 1e-4)
        lat = (x * coef).sum(1) + 0.5 * torch.logsumexp(x[:, :3], 1) + 0.1 * torch.randn(bs, generator=g)
        y = (lat + 14.3) / 5.0  # standardised with the training-set mean / std
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
