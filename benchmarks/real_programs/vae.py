"""pytorch/examples vae/main.py: the 784-400-20 VAE, Adam (lr 1e-3), batch 128, shuffled, and
its loss: binary cross-entropy plus KL divergence, both summed over the batch (so the loss is
about 550 x 128 at first). Changes: synthetic digits in [0, 1] (2560 images: 20 steps an epoch; the
example has no lr schedule)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn, optim

from ._data import digits

NAME = "vae"
EXPECT = "healthy"
STEPS = 150
EXAMPLE = "vae/main.py"


class VAE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x: torch.Tensor, x: torch.Tensor, mu: torch.Tensor,
                  logvar: torch.Tensor) -> torch.Tensor:
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(1)
    x, y = digits(2560, seed=103)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=128,
                                         shuffle=True)
    model = VAE()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    losses: list[float] = []
    with dbg_factory(model) as dbg:
        while len(losses) < steps:
            model.train()
            for data, _ in loader:
                optimizer.zero_grad()
                recon_batch, mu, logvar = model(data)
                loss = loss_function(recon_batch, data, mu, logvar)
                loss.backward()
                dbg.record_loss(loss)
                optimizer.step()
                losses.append(loss.item())
                if len(losses) == steps:
                    break
    return losses
