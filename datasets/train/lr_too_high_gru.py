"""lr_too_high on a GRU sequence regressor trained with plain, momentum or Nesterov SGD.

Mechanism: a one- or two-layer GRU reads standardised multichannel sequences and a linear head
regresses a (standardised) score of the sequence, a task the same model learns in about a
hundred steps at a sane learning rate (0.03-0.05 with momentum 0.9, plain or Nesterov; 0.2-0.3
without momentum). Here the lr is 30-100x that. The MSE loss's curvature along the head (fed a
hidden state of O(1) entries) and along the last GRU weights is then far beyond the stability
edge, 2(1 + momentum) / lr: every step overshoots by more than the distance to the minimum, the
error and the weights grow geometrically, and the gates and candidate are driven into their
saturated ranges while the head keeps growing, until the loss overflows to inf/NaN. Some seeds
warm the lr up linearly over 10-40 steps, so the step at which the run breaks moves with the
seed. (AdamW at 100-1000x its sane lr was tried too and does not make a label on a GRU: each
weight moves by at most ~lr per step, the bounded gates absorb it and the run often still
learns.)

ORIGIN is None: the cause is the optimizer's configuration, shared by every layer, not a module.
Fixed: the same run at the sane learning rate (the peak divided by the same factor).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "The PyTorch forum pattern 'LSTM/GRU loss explodes to NaN after some iterations' answered "
    "with 'your learning rate is too high' (e.g. SGD at lr=1 copied from the word-language-model "
    "example, whose lr of 20 only works with gradient clipping) and Pascanu et al. 2013 on "
    "recurrent nets' instability; lowering the lr fixes it."
)


class SeqRegressor(nn.Module):
    def __init__(self, d_in: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.gru = nn.GRU(d_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def _data(seed: int, steps: int, batch: int, seq: int, d_in: int) -> list:
    """Sequences of standardised noise; the target mixes a decaying sum of one channel with a
    product of two others, standardised, so a small GRU learns it quickly."""
    g = torch.Generator().manual_seed(130_000 + seed)
    w = torch.randn(d_in, generator=g) / d_in**0.5
    decay = 0.8 ** torch.arange(seq - 1, -1, -1, dtype=torch.float32)
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, seq, d_in, generator=g)
        lin = ((x @ w) * decay).sum(1) / decay.norm()
        inter = x[:, -1, 0] * x[:, -2, 1 % d_in]
        y = (0.8 * lin + 0.4 * inter).unsqueeze(1)
        batches.append((x, y + 0.05 * torch.randn(batch, 1, generator=g)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([3, 4, 6])
    hidden = rng.choice([24, 32, 48])
    layers = rng.choice([1, 2])
    seq = rng.choice([8, 12, 16])
    batch = rng.choice([32, 64])
    steps = rng.choice([150, 200, 250])
    optim = rng.choice(["momentum", "nesterov", "plain"])
    factor = rng.choice([30, 50, 100])
    warmup = rng.choice([0, 10, 25, 40])
    sane = rng.choice([0.03, 0.05]) if optim != "plain" else rng.choice([0.2, 0.3])
    lr = sane if fixed else sane * factor

    torch.manual_seed(seed)
    model = SeqRegressor(d_in, hidden, layers)
    momentum = 0.0 if optim == "plain" else 0.9
    opt = torch.optim.SGD(
        model.parameters(), lr=lr, momentum=momentum, nesterov=optim == "nesterov"
    )
    if warmup:
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup))
        opt.register_step_post_hook(lambda *_: sched.step())
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, seq, d_in),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
