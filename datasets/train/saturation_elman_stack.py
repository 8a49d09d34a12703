"""saturation: a stacked Elman (tanh) RNN unrolled by hand whose hidden units sit at +-1.

Mechanism: a sequence classifier built from two or three Elman cells stacked in depth and
unrolled over time by hand (``h_t = tanh(W_x x_t + W_h h_{t-1} + b)``, the nn.RNNCell update,
with the tanh as its own module). The input and recurrent matrices are drawn with a fixed std
of 1.5-2.0 instead of 1/sqrt(fan_in) (a common slip when porting Keras-style RNN code, or a
"gain" meant for a ReLU net), so every pre-activation has a spread of about 8-30: from
step 0, 70-90% of the tanh outputs of every layer are beyond |h| > 0.99, tanh'(a) ~ 0, and
backpropagation through the tanh (over time and over the stack) carries almost nothing. What
the readout sees is a near-random sign pattern of the sequence (the recurrence is in its
chaotic regime), so the cross-entropy barely moves from ln(C) and the loss stalls.

The activations stay bounded (|h| <= 1); the scale is flat over time and depth, the units are
pinned at the tanh limits (the saturation signature, not bad_init's geometric growth).

ORIGIN: ``cells.0.act``, the tanh of the first cell, the first activation that saturates.
Fixed: the same weights, data and optimizer with a LayerNorm on each cell's pre-activation
(the layer-normalised RNN of Ba et al. 2016), which brings the pre-activations back to unit
scale and removes the saturation.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "cells.0.act"
SOURCE = (
    "Pascanu, Mikolov & Bengio 2013, 'On the difficulty of training recurrent neural networks' "
    "(saturated tanh units and vanishing gradients through time) and Ba, Kiros & Hinton 2016, "
    "'Layer Normalization' (layer-normalised RNNs keep the tanh pre-activations in range)."
)


class ElmanCell(nn.Module):
    def __init__(self, d_in: int, hidden: int, std: float, norm: bool) -> None:
        super().__init__()
        self.inp = nn.Linear(d_in, hidden)
        self.rec = nn.Linear(hidden, hidden, bias=False)
        for lin in (self.inp, self.rec):
            nn.init.normal_(lin.weight, 0.0, std)
        nn.init.zeros_(self.inp.bias)
        self.norm = nn.LayerNorm(hidden) if norm else nn.Identity()
        self.act = nn.Tanh()

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.act(self.norm(self.inp(x) + self.rec(h)))


class StackedElman(nn.Module):
    def __init__(self, d_in: int, hidden: int, layers: int, classes: int, std: float,
                 norm: bool) -> None:
        super().__init__()
        self.hidden = hidden
        dims = [d_in] + [hidden] * layers
        self.cells = nn.ModuleList(
            ElmanCell(dims[i], hidden, std, norm) for i in range(layers))
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, T, D)
        hs = [x.new_zeros(x.shape[0], self.hidden) for _ in self.cells]
        for t in range(x.shape[1]):
            inp = x[:, t]
            for i, cell in enumerate(self.cells):
                hs[i] = cell(inp, hs[i])
                inp = hs[i]
        return self.head(hs[-1])


def _data(seed: int, steps: int, batch: int, length: int, d_in: int, classes: int) -> list:
    """Noisy sequences whose class sets the frequency of a sinusoid carried on the features."""
    g = torch.Generator().manual_seed(310_000 + seed)
    mix = torch.randn(2, d_in, generator=g) / 2**0.5
    freqs = torch.linspace(0.3, 1.4, classes)
    t = torch.arange(length, dtype=torch.float32)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        phase = 6.283 * torch.rand(batch, 1, generator=g)
        arg = freqs[y].unsqueeze(1) * t + phase
        wave = torch.stack([torch.sin(arg), torch.cos(arg)], dim=-1)  # (B, T, 2)
        x = wave @ mix + 0.3 * torch.randn(batch, length, d_in, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    layers = rng.choice([2, 3])
    hidden = rng.choice([24, 32, 48])
    d_in = rng.choice([4, 6, 8])
    length = rng.choice([10, 12, 16])
    classes = rng.choice([3, 4])
    batch = rng.choice([32, 64])
    steps = rng.choice([120, 150, 180])
    std = rng.choice([1.5, 2.0])
    optim = rng.choice(["rmsprop", "adam"])
    lr = rng.choice([1e-3, 2e-3]) if optim == "rmsprop" else rng.choice([2e-3, 5e-3])

    batches = _data(seed, steps, batch, length, d_in, classes)
    torch.manual_seed(seed)
    model = StackedElman(d_in, hidden, layers, classes, std, norm=fixed)
    if optim == "rmsprop":
        opt: torch.optim.Optimizer = torch.optim.RMSprop(model.parameters(), lr=lr)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
