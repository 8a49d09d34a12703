"""pytorch/examples regression/main.py: fit a degree-4 polynomial (random coefficients x 5) with
one nn.Linear(4, 1) on features [x, x^2, x^3, x^4] of x ~ N(0, 1), smooth-L1 loss, batches of 32,
no optimizer: fc.zero_grad(), then param.data.add_(-0.1 * param.grad); it stops when the loss
falls under 1e-3 (the loop ends there, before the step count). Changes: seeded (the example is
not)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

NAME = "regression"
EXPECT = "healthy"
STEPS = 1000
EXAMPLE = "regression/main.py"

POLY_DEGREE = 4


def make_features(x: torch.Tensor) -> torch.Tensor:
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(0)
    W_target = torch.randn(POLY_DEGREE, 1) * 5
    b_target = torch.randn(1) * 5

    def get_batch(batch_size: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
        x = make_features(torch.randn(batch_size))
        return x, x.mm(W_target) + b_target.item()

    fc = torch.nn.Linear(W_target.size(0), 1)
    losses: list[float] = []
    with dbg_factory(fc) as dbg:
        for _ in range(steps):
            batch_x, batch_y = get_batch()
            fc.zero_grad()
            output = F.smooth_l1_loss(fc(batch_x), batch_y)
            loss = output.item()
            output.backward()
            dbg.record_loss(output)
            for param in fc.parameters():
                param.data.add_(-0.1 * param.grad)
            losses.append(loss)
            if loss < 1e-3:  # the example's stop criterion
                break
    return losses
