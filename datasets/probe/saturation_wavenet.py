"""saturation in a small WaveNet whose sigmoid gates start shut (gate bias -6 to -8) and stay shut.

Mechanism: a next-sample forecaster for short audio-like waveforms (a few sinusoids with a random
gain, plus noise). A causal input conv feeds 4-6 WaveNet residual layers with dilations 1, 2, 4,
...: a dilated causal conv gives filter and gate pre-activations, the gated unit computes
``tanh(f) * sigmoid(g)``, a 1x1 conv adds it back to the residual stream and another 1x1 conv
sends it to the skip sum; the output head (ReLU, 1x1, ReLU, 1x1) reads only the skip sum, as in
WaveNet. SGD with (Nesterov) momentum, MSE. The init borrows the highway-network / LSTM habit of
a negative gate bias "so that every layer starts close to the identity", and, the stack being
deep, sets it to -6 to -8 instead of -1 to -3. Every gate pre-activation is then g = W x + b with
|W x| well below 1 and b = -6..-8: the sigmoid sits on its flat tail, sigmoid(g) ~ 3e-4-2.5e-3,
and so does its derivative. The residual stream indeed passes through unchanged, but the gated
outputs, hence the skips and the head's input, are ~1e-4 of their normal size, and every
gradient that could open a gate or use its output is multiplied by sigmoid'(g) ~ 1e-3 (by
sigmoid(g) for the filter weights). The gates never leave the tail: the loss stays at the
target's variance (wandering with each batch's mix of gains) for the whole run, a finite
plateau; the tanh filters themselves are in their linear range.

ORIGIN: ``layers.0.gate``, the first layer's gated unit, the first activation whose sigmoid is
saturated (every later layer's gate is saturated in the same way; the conv before it has normal
weights and only its gate bias is at fault).
Fixed: the same model, data and optimizer with the gate biases at 0, so the gate
pre-activations are in the sigmoid's linear range (sigmoid ~ 0.5, derivative ~ 0.24); the loss
falls to a few percent of the variance.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "layers.0.gate"
SOURCE = (
    "van den Oord et al. 2016 (WaveNet: dilated causal convolutions, gated activation "
    "tanh(W_f * x) * sigmoid(W_g * x), residual and skip connections); Srivastava et al. 2015 "
    "(Highway Networks: negative transform-gate bias, -1 to -3, to start layers as carry) and "
    "Glorot & Bengio 2010 on saturated sigmoid units passing almost no gradient."
)


class CausalConv1d(nn.Conv1d):
    def __init__(self, c_in: int, c_out: int, kernel: int, dilation: int = 1) -> None:
        super().__init__(c_in, c_out, kernel, dilation=dilation)
        self.left = (kernel - 1) * dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(nn.functional.pad(x, (self.left, 0)))


class Gate(nn.Module):
    """The gated activation unit: tanh(filter) * sigmoid(gate) on a (B, 2C, T) tensor."""

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        f, g = h.chunk(2, dim=1)
        return torch.tanh(f) * torch.sigmoid(g)


class ResidualLayer(nn.Module):
    def __init__(self, res: int, gate: int, skip: int, dilation: int) -> None:
        super().__init__()
        self.conv = CausalConv1d(res, 2 * gate, 2, dilation)
        self.gate = Gate()
        self.res = nn.Conv1d(gate, res, 1)
        self.skip = nn.Conv1d(gate, skip, 1)

    def forward(self, x: torch.Tensor) -> tuple:
        z = self.gate(self.conv(x))
        return x + self.res(z), self.skip(z)


class WaveNet(nn.Module):
    def __init__(self, res: int, gate: int, skip: int, layers: int) -> None:
        super().__init__()
        self.inp = CausalConv1d(1, res, 2)
        self.layers = nn.ModuleList([ResidualLayer(res, gate, skip, 2**i) for i in range(layers)])
        self.head = nn.Sequential(
            nn.ReLU(), nn.Conv1d(skip, skip, 1), nn.ReLU(), nn.Conv1d(skip, 1, 1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        total = 0
        for layer in self.layers:
            h, s = layer(h)
            total = total + s
        return self.head(total)


def _data(seed: int, steps: int, batch: int, length: int) -> list:
    """Audio-like clips: three sinusoids of random frequency, phase and amplitude, a log-normal
    clip gain, a little noise; the target is the next sample at every position."""
    g = torch.Generator().manual_seed(460_000 + seed)
    t = torch.arange(length + 1).float()
    batches = []
    for _ in range(steps):
        freq = 0.05 + 0.4 * torch.rand(batch, 3, 1, generator=g)
        phase = 2 * math.pi * torch.rand(batch, 3, 1, generator=g)
        amp = torch.rand(batch, 3, 1, generator=g)
        gain = torch.exp(0.5 * torch.randn(batch, 1, generator=g))
        wave = (amp * torch.sin(freq * t + phase)).sum(1) * gain
        wave = wave + 0.05 * torch.randn(batch, length + 1, generator=g)
        batches.append((wave[:, None, :-1], wave[:, None, 1:]))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    layers = rng.choice([4, 5, 6])
    res = rng.choice([16, 24])
    gate = res
    skip = rng.choice([16, 32])
    length = rng.choice([64, 96])
    batch = rng.choice([16, 24])
    steps = rng.choice([120, 150])
    lr = rng.choice([0.02, 0.05])
    nesterov = rng.random() < 0.5
    bias = rng.choice([-6.0, -7.0, -8.0])  # the "closed gate" bias of the buggy init

    torch.manual_seed(seed)
    model = WaveNet(res, gate, skip, layers)
    with torch.no_grad():
        for layer in model.layers:
            gate_bias = layer.conv.bias[gate:]
            gate_bias.fill_(0.0 if fixed else bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=nesterov)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": _data(seed, steps, batch, length),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
