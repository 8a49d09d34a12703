"""pytorch/examples time_sequence_prediction/train.py: two LSTMCells (51 units) and a linear
layer in float64 predict the next value of sine waves, MSELoss, LBFGS (lr 0.8) over the whole
training set, optimizer.step(closure), the closure evaluated up to 20 times a step; after each
step the example predicts 1000 future values under no_grad (done here with 50) and plots them.
Changes: the sine waves of generate_sine_wave.py (T 20, phase shifts of +-4T) but 24 of length 80
instead of 100 of length 1000 (CPU time); 3 held out as the example holds out 3.

The loss is recorded once per optimizer step: on the closure's first evaluation of the step (the
loss at the weights the step starts from, the one LBFGS returns), not on its line-search
re-evaluations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn, optim

NAME = "time_sequence"
EXPECT = "healthy"
STEPS = 6
EXAMPLE = "time_sequence_prediction/train.py"

T, L, N = 20, 80, 24


class Sequence(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input: torch.Tensor, future: int = 0) -> torch.Tensor:
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def sine_waves() -> np.ndarray:
    """generate_sine_wave.py, at N x L."""
    rng = np.random.RandomState(2)
    x = np.empty((N, L), "int64")
    x[:] = np.array(range(L)) + rng.randint(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype("float64")


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    np.random.seed(0)
    torch.manual_seed(0)
    data = sine_waves()
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    seq = Sequence()
    seq.double()
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    losses: list[float] = []
    first = [True]  # the step's first evaluation of the closure still to come

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        loss.backward()
        if first[0]:
            dbg.record_loss(loss)
            losses.append(loss.item())
            first[0] = False
        return loss

    with dbg_factory(seq) as dbg:
        for _ in range(steps):
            first[0] = True
            optimizer.step(closure)
            with torch.no_grad():
                seq(test_input, future=50)
    return losses
