"""pytorch/examples mnist_rnn/main.py: an LSTM reads the image row by row (28 steps of 28
pixels), then BatchNorm1d, Dropout2d, two linear layers; Adadelta (lr 0.1), StepLR (gamma 0.7 per
epoch), batch 64, shuffled. Changes: synthetic digits (STEPS x 64 images: the default run is
one epoch, as the example's first steps are)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.optim.lr_scheduler import StepLR

from ._data import digits

NAME = "mnist_rnn"
EXPECT = "healthy"
STEPS = 120
EXAMPLE = "mnist_rnn/main.py"


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(64)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        input = input.reshape(-1, 28, 28)
        output, _hidden = self.rnn(input)
        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        return F.log_softmax(output, dim=1)


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(1)
    x, y = digits(STEPS * 64, seed=102)
    x = (x - 0.1307) / 0.3081
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=64,
                                         shuffle=True)
    model = Net()
    optimizer = optim.Adadelta(model.parameters(), lr=0.1)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses: list[float] = []
    with dbg_factory(model) as dbg, warnings.catch_warnings():
        # Dropout2d on (N, C) input: torch warns it drops whole channels; the example does this
        warnings.filterwarnings("ignore", message=".*dropout2d.*", category=UserWarning)
        while len(losses) < steps:
            model.train()
            for data, target in loader:
                optimizer.zero_grad()
                output = model(data)
                loss = F.nll_loss(output, target)
                loss.backward()
                dbg.record_loss(loss)
                optimizer.step()
                losses.append(loss.item())
                if len(losses) == steps:
                    break
            scheduler.step()
    return losses
