"""Software defect prediction: an MLP maps per-module static code metrics (PROMISE / NASA MDP
style: lines of code, Halstead volume/effort, cyclomatic complexity, number of operands,
churn, ...) to the expected number of post-release defects, trained with a Poisson NLL
(``PoissonNLLLoss(log_input=True, full=True)``, the network outputs the log-rate).  Adam.

Mechanism: the metrics are fed exactly as exported by the metrics tool.  Their scales differ
by five orders of magnitude (complexity ~1-50, LOC ~10-5000, Halstead volume ~1e2-1e5,
Halstead effort ~1e3-1e7).  With default-initialised Linear layers the log-rate output is
of order 10-1e4 on the first batch, so the Poisson NLL is ~1e4-1e5 (or already inf) at step 0,
the first Adam steps cannot compensate raw inputs of size 1e7 and exp(log_rate) overflows to
inf within 1-3 steps.

ORIGIN: ``net.0`` -- the first Linear, which receives the raw, unscaled metric columns and
turns them into hidden activations of size 1e2-1e5.

Fix (fixed=True): the same metric columns log1p-transformed and standardised with the mean and
std of the training set (computed once in build), the usual preprocessing for skewed code
metrics; model, loss, optimiser and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("PROMISE / NASA MDP defect datasets (Halstead and McCabe metrics); log-transform of "
          "skewed code metrics (Menzies et al. 2007 'Data mining static code attributes to "
          "learn defect predictors'); PyTorch forum 'PoissonNLLLoss returns inf'.")


def _metrics(g, n):
    """Return (raw metrics [n, 8], latent defect log-rate [n])."""
    size = torch.empty(n).log_normal_(5.0, 1.1, generator=g)             # LOC
    cc = (size / 25.0 * torch.empty(n).log_normal_(0.0, 0.4, generator=g)).clamp(min=1)
    operands = size * torch.empty(n).uniform_(1.5, 4.0, generator=g)
    operators = size * torch.empty(n).uniform_(2.0, 5.0, generator=g)
    vocab = (operands + operators).sqrt() * 3
    volume = (operands + operators) * torch.log2(vocab)
    difficulty = torch.empty(n).uniform_(5.0, 60.0, generator=g)
    effort = volume * difficulty
    churn = size * torch.empty(n).uniform_(0.0, 0.6, generator=g)
    X = torch.stack([size, cc, operands, operators, volume, difficulty, effort, churn], 1)
    log_rate = -3.2 + 0.45 * torch.log1p(size) + 0.35 * torch.log1p(churn) \
        + 0.25 * torch.log1p(cc) - 0.01 * difficulty
    return X, log_rate


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [64, 32, 128][seed % 3]
    steps = 200

    torch.manual_seed(seed)
    layers, d = [], 8
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    model = nn.Sequential()
    model.net = nn.Sequential(*layers, nn.Linear(d, 1))
    model.add_module("squeeze", nn.Flatten(0))

    X, log_rate = _metrics(g, steps * bs)
    y = torch.poisson(log_rate.exp(), generator=g)
    if fixed:
        X = torch.log1p(X)
        X = (X - X.mean(0)) / X.std(0)
    batches = [(X[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.PoissonNLLLoss(log_input=True, full=True),
                batches=batches, steps=steps)
