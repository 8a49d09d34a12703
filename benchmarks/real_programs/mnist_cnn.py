"""pytorch/examples mnist/main.py: the two-conv CNN, Adadelta (lr 1.0) and StepLR (gamma 0.7
per epoch), dropout on. Changes: synthetic digits (STEPS x 32 images, so that the default run is
one epoch, as the example's first 60 steps are; normalised with MNIST's mean and std as the
example's transform does) and batch size 32 instead of 64 (CPU time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.optim.lr_scheduler import StepLR

from ._data import digits

NAME = "mnist_cnn"
EXPECT = "healthy"
STEPS = 60
EXAMPLE = "mnist/main.py"


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(1)
    x, y = digits(STEPS * 32, seed=101)
    x = (x - 0.1307) / 0.3081
    # the example's CPU loader: batch_size only, no shuffle
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32)
    model = Net()
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses: list[float] = []
    with dbg_factory(model) as dbg:
        while len(losses) < steps:  # epochs
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
