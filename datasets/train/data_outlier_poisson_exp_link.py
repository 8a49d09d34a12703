"""data_outlier in a count regressor with an exponential link: a glitched sensor row overflows exp.

Setting: predicting hourly event counts (arrivals at a station, defects on a line) from 12
standardised sensor and calendar features with a Poisson model, written the textbook way: an MLP
outputs the log-rate, `PoissonHead` turns it into a rate with `torch.exp`, and the loss is the
Poisson negative log-likelihood on the rate (`nn.PoissonNLLLoss(log_input=False)`). Training is
calm (the NLL falls from ~3 to ~1.6) until one batch, at a seed-dependent step between 40% and
70% of the run, carries 1-3 rows from a glitching sensor: one feature holds a raw reading in
the wrong unit or a stuck ADC value (2e3-2e4) instead of a z-score.

Mechanism. The first Linear's units that read that feature output ~1e3-1e4 on those rows, the
ReLU MLP carries them to a log-rate of a few hundred or more, and exp() of anything above ~88.7
is inf in float32: the rate is born inf in `head` (an op on finite, ordinary-looking inputs of
the step before), the NLL is inf and the gradients NaN. The weights, the lr and the op are the
ones that trained fine for a hundred steps; the batch is what broke it.

Seeds vary the optimizer (SGD + momentum, Adam), the width, which feature glitches and how many
rows. ORIGIN is None: the failure starts in the input batch (`head` is only where the first
inf appears). Fixed: the same batches with the glitched values replaced by clean z-scores.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "Forum and issue threads 'Poisson regression loss becomes inf/NaN after many iterations' "
    "(log link with exp in the forward) traced to one batch with an unnormalised or stuck "
    "sensor value; GLM practice: filter or clip out-of-range inputs before the exp link."
)

FEATURES = 12


class PoissonHead(nn.Module):
    """log-rate -> rate (the exponential link)."""

    def forward(self, log_rate: torch.Tensor) -> torch.Tensor:
        return torch.exp(log_rate).squeeze(-1)


class CountRegressor(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(FEATURES, width), nn.ReLU(),
            nn.Linear(width, width), nn.ReLU(),
            nn.Linear(width, 1),
        )
        self.head = PoissonHead()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    torch.manual_seed(seed)
    width = rng.choice([32, 48, 64])
    steps, batch = 200, 64
    true_w = torch.randn(FEATURES, generator=g) * 0.35
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, FEATURES, generator=g)
        rate = torch.exp(0.8 + x @ true_w * 0.6)
        y = torch.poisson(rate, generator=g)
        batches.append((x, y))
    bad_step = rng.randrange(int(0.4 * steps), int(0.7 * steps))
    feature = rng.randrange(FEATURES)
    rows = rng.sample(range(batch), rng.randint(1, 3))
    if not fixed:
        x, y = batches[bad_step]
        x = x.clone()
        for r in rows:
            x[r, feature] = rng.uniform(2e3, 2e4) * rng.choice([1.0, -1.0])
        batches[bad_step] = (x, y)
    model = CountRegressor(width)
    if seed % 2 == 0:
        opt: torch.optim.Optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.PoissonNLLLoss(log_input=False),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
