"""CI build-duration prediction (for build scheduling / flaky-timeout
tuning): an MLP regresses a pipeline's wall-clock duration from change and
pipeline metadata - lines added/deleted, files touched, number of test
targets affected, the previous build's duration, queue length, hour of day,
merge-commit flag - with MSE and SGD+momentum.  The features go in as raw
counts and seconds and the target is in raw seconds.

Mechanism: nothing is normalised.  Churn counts and test counts reach
1e3-1e4, the previous duration is 1e2-1e4 s and the target is 1e2-1e4 s, so
the first forward pass already gives an MSE of ~1e6-1e7 and the gradient of
the first layer is error (1e3) x input (1e4) ~ 1e7 per weight.  The very
first SGD step moves the weights by orders of magnitude, the next outputs
are ~1e6-1e9 times larger, and within a few steps the loss overflows to
inf/NaN.

ORIGIN: ``net.0`` - the first Linear, which receives the raw-scale inputs
and whose weights take the first giant update.

Fix: standardise the inputs (log1p for the heavy-tailed counts/seconds, then
z-score with reference statistics) and the target (z-scored log-duration);
model, optimiser and steps unchanged.
"""
import math
import random

import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("CI build-time prediction from change metadata (e.g. Bisong et al. 2017 'Built to last or "
          "built too fast? Evaluating prediction models for build times', TravisTorrent data); "
          "unnormalised raw-count/seconds features and targets blowing up SGD (CS231n 'data "
          "preprocessing'; PyTorch forum 'loss becomes nan after a few iterations regression')")

N_FEAT = 8


def _builds(g, n):
    loc_add = torch.exp(torch.randn(n, generator=g) * 1.5 + 4.0)          # ~55 median, heavy tail
    loc_del = torch.exp(torch.randn(n, generator=g) * 1.5 + 3.0)
    files = torch.ceil(torch.exp(torch.randn(n, generator=g) * 1.0 + 1.5))
    tests = torch.ceil(torch.exp(torch.randn(n, generator=g) * 1.2 + 5.5))  # ~250 median
    prev = torch.exp(torch.randn(n, generator=g) * 0.6 + 6.5)              # ~660 s median
    queue = torch.poisson(torch.full((n,), 6.0), generator=g)
    hour = torch.randint(0, 24, (n,), generator=g).float()
    merge = (torch.rand(n, generator=g) < 0.2).float()
    x = torch.stack([loc_add, loc_del, files, tests, prev, queue, hour, merge], 1)
    dur = (0.55 * prev + 1.8 * tests + 0.02 * loc_add + 25 * queue + 300 * merge
           + 60 * torch.sin(hour / 24 * 2 * math.pi)) * torch.exp(0.1 * torch.randn(n, generator=g))
    return x, dur


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    width = r.choice([32, 64, 128])
    depth = r.choice([2, 3])
    lr = r.choice([0.005, 0.01, 0.02])
    bs = r.choice([32, 64, 128])
    steps = r.choice([100, 150, 200])

    g = torch.Generator().manual_seed(17000 + seed)
    ref_x, ref_y = _builds(g, 4096)                          # reference window for statistics
    heavy = torch.tensor([1, 1, 1, 1, 1, 1, 0, 0], dtype=torch.bool)

    def prep_x(x):
        x = torch.where(heavy, torch.log1p(x), x)
        return (x - mu_x) / sd_x

    rx = torch.where(heavy, torch.log1p(ref_x), ref_x)
    mu_x, sd_x = rx.mean(0), rx.std(0)
    mu_y, sd_y = torch.log(ref_y).mean(), torch.log(ref_y).std()

    batches = []
    for _ in range(steps):
        x, y = _builds(g, bs)
        if fixed:
            x, y = prep_x(x), (torch.log(y) - mu_y) / sd_y
        batches.append((x, y))

    torch.manual_seed(seed)
    layers, d = [], N_FEAT
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    model = _Regressor(nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    mse = nn.MSELoss()
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: mse(out.squeeze(1), y),
                batches=batches, steps=steps)


class _Regressor(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)
