"""bad_init: a deep weight-tied autoencoder whose shared weights start far too large or too small.

Mechanism: a deep MLP autoencoder (3-4 encoder layers, ``F.relu`` between them) with tied
weights: the decoder has no weight matrices of its own, it runs the encoder's Linear weights
back in reverse order, transposed (``F.linear(h, enc[i].weight.t(), dec_bias[i])``), the classic
tied / RBM-style autoencoder, so each shared matrix is used twice per forward pass, 6-8 matrix
products in all. It reconstructs standardised feature vectors (MSE, SGD with momentum). The
author initialises the shared weights by hand with ``nn.init.normal_`` and the wrong scale:
either std 1 (``normal_``'s default, the std argument forgotten) or std 0.01 (the "gaussian 0.01"
recipe of shallow nets). Each product then multiplies the activation scale by about
``std * sqrt(fan_in / 2)`` after the ReLU: 4-8x per layer with std 1, 0.02-0.06x with std 0.01.
Over 6-8 products this compounds geometrically from step 0:
* std 1: the reconstruction is 1e4-1e6 times too large, the MSE loss 1e8-1e12, the gradient of
  each shared matrix (the sum of its encoder and its decoder use) just as inflated, so the first
  SGD update moves the weights by orders of magnitude and the loss overflows to inf/NaN within a
  few steps;
* std 0.01: the reconstruction is 1e-8 of the input or less, the output is the last decoder
  bias, and every weight gradient is a product of a vanishing activation and a vanishing
  back-propagated error: the weights cannot grow back and the loss sits at the data's variance
  (a plateau).
Seeds change the depth, the widths, the input dimension, the batch size, the lr, and which of
the two scales the init uses.

ORIGIN: ``enc.0``, the first encoder Linear, where the geometric growth (or shrinkage) starts;
the decoder has no modules of its own (its products reuse the encoder's weights).
Fixed: the same model, data and optimizer with the shared weights xavier_uniform_ initialised with
the ReLU gain (the usual choice for a tied matrix, which serves as fan-in in one direction and as
fan-out in the other) and zero biases.
"""

from __future__ import annotations

import itertools
import random

import torch
from torch import nn
from torch.nn import functional as F

CAUSE = "bad_init"
ORIGIN = "enc.0"
SOURCE = (
    "Tied-weight autoencoders (Vincent et al. 2010, stacked denoising autoencoders; Hinton & "
    "Salakhutdinov 2006) trained end to end without layer-wise pretraining, and forum threads "
    "'deep autoencoder loss is NaN / output is constant' after hand-written "
    "nn.init.normal_(w) or N(0, 0.01) init; Glorot & Bengio 2010 on activation scale growing or "
    "shrinking geometrically with depth."
)


class TiedAutoencoder(nn.Module):
    def __init__(self, dims: list[int]) -> None:
        super().__init__()
        self.enc = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(dims))
        # The decoder owns only biases: dec_bias[i] is the bias of the product that undoes enc[i].
        self.dec_bias = nn.ParameterList(nn.Parameter(torch.zeros(a)) for a in dims[:-1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for i, layer in enumerate(self.enc):
            h = layer(h)
            if i < len(self.enc) - 1:
                h = F.relu(h)
        for i in reversed(range(len(self.enc))):
            h = F.linear(h, self.enc[i].weight.t(), self.dec_bias[i])
            if i > 0:
                h = F.relu(h)
        return h


def _data(seed: int, steps: int, batch: int, d: int) -> list:
    """Vectors on a curved 6-dimensional manifold plus a little noise, standardised."""
    g = torch.Generator().manual_seed(340_000 + seed)
    a = torch.randn(6, d, generator=g) / 6**0.5
    b = torch.randn(6, d, generator=g) / 6**0.5
    z = torch.randn(steps * batch, 6, generator=g)
    x = z @ a + torch.tanh(z) @ b + 0.05 * torch.randn(steps * batch, d, generator=g)
    x = (x - x.mean(dim=0)) / x.std(dim=0)
    return [(x[i * batch:(i + 1) * batch], x[i * batch:(i + 1) * batch]) for i in range(steps)]


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d = rng.choice([32, 48, 64])
    depth = rng.choice([3, 4])
    widths = sorted((rng.choice([32, 48, 64, 96]) for _ in range(depth - 1)), reverse=True)
    dims = [d, *widths, rng.choice([8, 12])]
    batch = rng.choice([64, 128])
    steps = rng.choice([100, 120, 150])
    lr = rng.choice([0.01, 0.02])
    std = rng.choice([1.0, 0.01])

    batches = _data(seed, steps, batch, d)
    torch.manual_seed(seed)
    model = TiedAutoencoder(dims)
    with torch.no_grad():
        for layer in model.enc:
            if fixed:
                nn.init.xavier_uniform_(layer.weight, gain=nn.init.calculate_gain("relu"))
            else:
                nn.init.normal_(layer.weight, std=std)
            layer.bias.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
