"""Motor claim severity network (plain ReLU MLP on rating factors) hit by a sentinel amount.

Mechanism: severity is modelled on the amount scale (claim amount / portfolio mean
claim, MSE, SGD with momentum) from eight standardised rating factors. The claims
extract comes from a legacy claims system in which an amount of 99,999,999 means
"reserve not yet set". Two or three such rows land in a single mini-batch mid-run
(the step moves with the seed). Their target is ~2e4 times the mean claim, so the
squared error of that batch is ~1e8 times normal and the SGD step throws every layer
far from where it was; with the much larger weights the next batches' curvature is
far beyond what the learning rate tolerates, the loss grows by orders of magnitude
per step and overflows to inf a few steps later.

ORIGIN: None - the corrupt values are targets; no module is the start, every layer
receives the oversized gradient at the same step.

Fix: drop rows carrying the sentinel amount before batching (the usual data-cleaning
filter); same model, optimiser, learning rate and steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Neural severity models on rating factors (Noll, Salzmann & Wuthrich 2018 French MTPL "
          "case study; Wuthrich & Merz 2023); 9-filled 'unknown/not set' codes in legacy "
          "insurance and ERP extracts are a standard data-cleaning hazard; 'loss explodes to inf "
          "after one bad batch' reports on PyTorch forums.")

MEAN_CLAIM = 4_200.0  # currency units of one unit of `amount`


class SeverityNet(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers, d = [], 8
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(-1)


def _claims(g, n):
    # standardised rating factors: driver age, vehicle value, engine power, vehicle group,
    # bonus-malus level, vehicle age, region injury index, urban density
    x = torch.randn(n, 8, generator=g)
    mu = (0.45 * x[:, 1] + 0.2 * x[:, 2] + 0.3 * x[:, 3] - 0.25 * torch.tanh(x[:, 0] + 1)
          + 0.3 * x[:, 6] + 0.15 * x[:, 7] * (x[:, 6] > 0) - 0.1 * x[:, 5])
    amount = torch.exp(mu + 0.3 * torch.randn(n, generator=g))
    return x, amount


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    width = [64, 96, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.01, 0.02, 0.015][seed % 3]
    bs = [128, 96, 160][seed % 3]
    bad_step = [41, 67, 95][seed % 3]
    steps = 160
    _, ref = _claims(g, 20000)
    mean_claim = ref.mean()
    model = SeverityNet(width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = []
    for s in range(steps):
        x, amount = _claims(g, bs)
        y = amount / mean_claim
        if s == bad_step:
            # legacy claims system: paid amount 99,999,999 = "reserve not yet set"
            rows = torch.randperm(bs, generator=g)[: 2 + seed % 2]
            y[rows] = 99_999_999.0 / (MEAN_CLAIM * mean_claim)
            if fixed:
                keep = y * MEAN_CLAIM * mean_claim < 99_999_999.0 * 0.999
                x, y = x[keep], y[keep]
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
