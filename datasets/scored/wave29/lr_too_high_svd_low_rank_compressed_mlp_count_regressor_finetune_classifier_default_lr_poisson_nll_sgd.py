"""Low-rank compression of a trained traffic-count regressor: every hidden Linear is
replaced by its truncated SVD as two thin layers (U·sqrt(S), sqrt(S)·V^T), and the
compressed model is fine-tuned on the new season's data with Poisson NLL (log link),
SGD with momentum.

Mechanism: the fine-tuning learning rate (0.015-0.03, momentum 0.9) is the compression
toolkit's default, tuned on cross-entropy classifiers whose logit gradients are bounded by 1.
With a log link the Poisson-NLL gradient on each output is exp(log_rate) - y, i.e. of the
order of the counts themselves (~5-20), and the new season's data starts far from the old
fit, so the first updates are far beyond the stable step size: they overshoot, the log-rate
outputs grow in magnitude with alternating sign, exp() in the likelihood amplifies them, and
within a few steps to a few dozen steps the loss is inf/NaN.

ORIGIN: None -- lr_too_high; the step size is too large for every factor.

Fix: lower the fine-tuning lr (lr/10); same compressed model, data, loss and steps.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("SVD / low-rank factorisation compression (Denton et al. 2014; Xue et al. 2013) "
          "followed by fine-tuning; known pattern: a classifier-tuned default lr reused for a "
          "log-link Poisson regressor whose gradients scale with the counts -> divergence")


class CountNet(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(1)        # log-rate


def _factorise(lin: nn.Linear, rank: int) -> nn.Sequential:
    U, S, Vh = torch.linalg.svd(lin.weight.detach(), full_matrices=False)
    first = nn.Linear(lin.in_features, rank, bias=False)
    second = nn.Linear(rank, lin.out_features)
    with torch.no_grad():
        first.weight.copy_(S[:rank].sqrt().unsqueeze(1) * Vh[:rank])
        second.weight.copy_(U[:, :rank] * S[:rank].sqrt())
        second.bias.copy_(lin.bias.detach())
    return nn.Sequential(first, second)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(11000 + seed)
    n_in = 24
    width = [128, 96, 160][seed % 3]
    depth = [2, 3, 2][seed % 3]
    rank = [16, 12, 24][seed % 3]
    lr = [0.02, 0.015, 0.03][seed % 3]              # toolkit default fine-tuning lr
    if fixed:
        lr = lr / 10
    bs = [128, 64, 96][seed % 3]
    steps = 150

    w1 = torch.randn(n_in, 16, generator=g) / math.sqrt(n_in)
    w2 = torch.randn(16, generator=g) / 4.0
    shift = 1.2 * torch.randn(n_in, 16, generator=g) / math.sqrt(n_in)

    def sample(n, season):
        x = torch.randn(n, n_in, generator=g)
        w = w1 + shift if season else w1
        rate = torch.exp(1.5 + 1.2 * torch.tanh(3.0 * x @ w) @ w2)
        return x, torch.poisson(rate, generator=g)

    torch.manual_seed(seed)
    dense = CountNet(n_in, width, depth)
    popt = torch.optim.Adam(dense.parameters(), lr=3e-3)
    for _ in range(250):
        x, y = sample(256, 0)
        popt.zero_grad()
        F.poisson_nll_loss(dense(x), y, log_input=True).backward()
        popt.step()

    model = dense
    for i, m in enumerate(model.body):
        if isinstance(m, nn.Linear) and i > 0:
            model.body[i] = _factorise(m, rank)
    model.body[0] = _factorise(model.body[0], min(rank, n_in))

    batches = [sample(bs, 1) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(log_rate, y):
        return F.poisson_nll_loss(log_rate, y, log_input=True, full=True)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
