"""pytorch/examples mnist_forward_forward/main.py: Net([784, 500, 500]), each Layer an nn.Linear
with its own Adam (lr 0.03) and threshold 2, trained locally on the whole training set at once
(positive data: the label overlaid on the first 10 pixels; negative: a wrong label), layer 0 for
all its epochs, then layer 1 on layer 0's detached outputs. Net keeps its layers in a plain list
(as in the example), so Net itself has no parameters. Changes: synthetic digits (--train_size
256, normalised as MNIST) and 200 epochs per layer (--epochs; the example's default is 1000).
The steps of `run` are the epochs of each layer.

Monitored: layer 0 (the first Layer, with its loss recorded once per its own optimizer step);
the monitor stays attached while layer 1 trains, as a `with` around net.train would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.optim import Adam

from ._data import digits

NAME = "forward_forward"
EXPECT = "healthy"
STEPS = 200
EXAMPLE = "mnist_forward_forward/main.py"

LR, THRESHOLD = 0.03, 2.0


def get_y_neg(y: torch.Tensor) -> torch.Tensor:
    y_neg = y.clone()
    for idx, y_samp in enumerate(y):
        allowed_indices = list(range(10))
        allowed_indices.remove(int(y_samp.item()))
        y_neg[idx] = torch.tensor(allowed_indices)[
            torch.randint(len(allowed_indices), size=(1,))].item()
    return y_neg


def overlay_y_on_x(x: torch.Tensor, y: torch.Tensor | int, classes: int = 10) -> torch.Tensor:
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Layer(nn.Linear):
    def __init__(self, in_features: int, out_features: int, num_epochs: int) -> None:
        super().__init__(in_features, out_features)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=LR)
        self.threshold = THRESHOLD
        self.num_epochs = num_epochs
        self.dbg: Any = None  # the monitor, for the monitored layer
        self.losses: list[float] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos: torch.Tensor, x_neg: torch.Tensor  # type: ignore[override]
              ) -> tuple[torch.Tensor, torch.Tensor]:
        for _ in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(torch.exp(
                torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()
            if self.dbg is not None:
                self.dbg.record_loss(loss)
            self.opt.step()
            self.losses.append(loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


class Net(torch.nn.Module):
    def __init__(self, dims: list[int], num_epochs: int) -> None:
        super().__init__()
        self.layers: list[Layer] = []
        for d in range(len(dims) - 1):
            self.layers = [*self.layers, Layer(dims[d], dims[d + 1], num_epochs)]

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness += [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]  # type: ignore[union-attr]
        return torch.cat(goodness_per_label, 1).argmax(1)

    def train(self, x_pos: torch.Tensor, x_neg: torch.Tensor  # type: ignore[override]
              ) -> None:
        h_pos, h_neg = x_pos, x_neg
        for layer in self.layers:
            h_pos, h_neg = layer.train(h_pos, h_neg)


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(1)
    x, y = digits(256, seed=107)
    x = torch.flatten((x - 0.1307) / 0.3081, 1)
    net = Net([784, 500, 500], num_epochs=steps)
    x_pos = overlay_y_on_x(x, y)
    y_neg = get_y_neg(y)
    x_neg = overlay_y_on_x(x, y_neg)
    monitored = net.layers[0]
    with dbg_factory(monitored) as dbg:
        monitored.dbg = dbg
        net.train(x_pos, x_neg)
    monitored.dbg = None
    return monitored.losses
