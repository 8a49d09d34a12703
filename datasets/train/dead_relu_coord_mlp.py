"""dead_relu: a coordinate MLP (random Fourier features -> ReLU MLP) fitting an image, whose
hidden biases are initialised to a negative constant by a "sparse activations" init (RMSprop or
Adagrad, MSE or L1).

Mechanism: an implicit-neural-representation model maps 2-D pixel coordinates, encoded as random
Fourier features [sin(2 pi Bc), cos(2 pi Bc)], through a 4-6 layer ReLU MLP to an intensity. An
init helper meant to make the hidden code sparse sets every hidden Linear bias to -2 to -3,
while the features are bounded in [-1, 1] and the default weight init gives first-layer
pre-activations w.x with a spread (std) of about 0.4, whose maximum over the whole coordinate
domain stays below the bias magnitude. Every pre-activation of the first hidden layer is
therefore negative for every coordinate: the first ReLU outputs exactly 0 from step 0, the
layers after it see a zero input and a negative bias, so their ReLUs are dead too, no gradient
reaches any hidden weight or bias, and only the output bias learns. The target image is
standardised, so the loss sits at about its variance (about 1 for MSE, 0.8 for L1) for the whole
run: a plateau, whatever the optimizer.

ORIGIN: ``net.1``, the first ReLU, whose units are all dead.
Fixed: the same init, data and optimizer with LeakyReLU(0.1) in place of ReLU: the negative side
passes gradient, the biases and weights move and the image is fitted.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = (
    "Lu et al. 2019, 'Dying ReLU and Initialization: Theory and Numerical Examples'; CS231n "
    "notes on dead ReLUs ('a neuron that never activates across the entire training dataset'); "
    "forum threads on coordinate MLPs / NeRF-style models whose output is a constant image "
    "because every ReLU is inactive; Tancik et al. 2020 for the Fourier-feature encoding."
)


class FourierFeatures(nn.Module):
    """Random Fourier features of coordinates (Tancik et al. 2020): [sin(2pi Bc), cos(2pi Bc)]."""

    def __init__(self, features: int, scale: float, seed: int) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("b", scale * torch.randn(2, features, generator=g))

    def forward(self, c: torch.Tensor) -> torch.Tensor:
        z = 2 * math.pi * c @ self.b
        return torch.cat([torch.sin(z), torch.cos(z)], dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    depth = rng.choice([4, 5, 6])
    width = rng.choice([32, 48, 64])
    batch = rng.choice([64, 128, 256])
    steps = rng.choice([200, 250, 300])
    bias = rng.choice([-2.0, -2.5, -3.0])
    loss_fn: nn.Module = rng.choice([nn.MSELoss(), nn.L1Loss()])
    n_feat = rng.choice([16, 32])
    optim = rng.choice(["rmsprop", "adagrad"])
    lr = rng.choice([3e-3, 1e-2]) if optim == "rmsprop" else rng.choice([0.02, 0.05])

    g = torch.Generator().manual_seed(13_000 + seed)
    # A smooth target image: a sum of a few random 2-D sinusoids and Gaussian blobs.
    freqs = 1.0 + 2.0 * torch.rand(3, 2, generator=g)
    phases = 2 * math.pi * torch.rand(3, generator=g)
    blobs = 2 * torch.rand(2, 2, generator=g) - 1

    def image(c: torch.Tensor) -> torch.Tensor:
        v = sum(torch.sin(math.pi * (c @ freqs[k]) + phases[k]) for k in range(3)) / 2
        for b in blobs:
            v = v + torch.exp(-((c - b) ** 2).sum(dim=1) / 0.1)
        return v.unsqueeze(1)

    grid = 2 * torch.rand(4096, 2, generator=g) - 1
    mean, std = image(grid).mean(), image(grid).std()
    batches = []
    for _ in range(steps):
        c = 2 * torch.rand(batch, 2, generator=g) - 1
        batches.append((c, (image(c) - mean) / std))

    torch.manual_seed(seed)
    act = (lambda: nn.LeakyReLU(0.1)) if fixed else nn.ReLU
    net = nn.Sequential(nn.Linear(2 * n_feat, width), act())
    for _ in range(depth - 2):
        net.append(nn.Linear(width, width))
        net.append(act())
    net.append(nn.Linear(width, 1))
    for layer in net[:-1]:
        if isinstance(layer, nn.Linear):
            nn.init.constant_(layer.bias, bias)  # the "sparse activations" init
    model = nn.Sequential()
    model.add_module("encode", FourierFeatures(n_feat, 1.0, 14_000 + seed))
    model.add_module("net", net)
    if optim == "rmsprop":
        opt: torch.optim.Optimizer = torch.optim.RMSprop(model.parameters(), lr=lr)
    else:
        opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": loss_fn,
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
