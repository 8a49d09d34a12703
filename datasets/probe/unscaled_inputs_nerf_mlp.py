"""unscaled_inputs: a NeRF-style coordinate MLP fed raw metres and fitted to raw pascals.

Mechanism: a coordinate network (NeRF's positional encoding gamma(p) = (sin(2^k pi p),
cos(2^k pi p)) for k < L = 4-8, then a 3-5 layer ReLU MLP, Adam at NeRF-like learning rates)
regresses a surface-pressure field over a survey area: the inputs are easting, northing and
altitude in metres (0-5000 m across, 0-2000 m up) and the target is the station pressure in
pascals (about 8e4-1e5 Pa: the barometric decrease with altitude plus synoptic highs and lows
of a few hPa). The encoding assumes coordinates in [-1, 1]; fed metres, sin(2^k pi p) of points
metres apart is aliased noise that carries nothing about the position, and the target is never
standardised, so the MSE loss starts near 8e9 (the squared mean pressure). Adam moves each
weight by about lr per step and the encoded features are bounded, so the output can only climb
towards 1e5 Pa slowly; over the run the loss stays at about 8e9, a stall from step 0 with no
sign of the field (or even its mean) being learned.

ORIGIN is None: the cause is in the data pipeline (coordinates and targets never normalised),
before any module; the encoding and the first Linear only receive it.
Fixed: the same model, optimizer and sample points with the coordinates mapped to [-1, 1]
(divided by the survey extent) and the pressure standardised with the training mean and std.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = (
    "NeRF (Mildenhall et al. 2020) positional encoding and Tancik et al. 2020 Fourier "
    "features, both of which assume coordinates normalised to [-1, 1] or [0, 1]; forum and "
    "issue reports of coordinate MLPs for geophysical/weather fields (SIREN/NeRF-style) that "
    "do not learn when given raw metres or UTM coordinates and raw physical targets."
)


class PositionalEncoding(nn.Module):
    def __init__(self, freqs: int) -> None:
        super().__init__()
        self.register_buffer("scales", math.pi * 2.0 ** torch.arange(freqs, dtype=torch.float32))

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        a = p.unsqueeze(-1) * self.scales  # (B, 3, L)
        return torch.cat([torch.sin(a).flatten(1), torch.cos(a).flatten(1)], dim=1)


def _field(xyz: torch.Tensor, centres: torch.Tensor, amps: torch.Tensor) -> torch.Tensor:
    """Station pressure [Pa]: barometric formula plus a few synoptic highs/lows (~1-2 hPa)."""
    p0 = 101_325.0 * torch.exp(-xyz[:, 2] / 8_400.0)
    d2 = ((xyz[:, None, :2] - centres[None]) ** 2).sum(-1)
    return (p0 + (amps * torch.exp(-d2 / (2 * 1_200.0**2))).sum(-1)).unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    freqs = rng.choice([4, 6, 8])
    width = rng.choice([64, 96, 128])
    depth = rng.choice([3, 4, 5])
    batch = rng.choice([128, 256])
    steps = rng.choice([120, 150, 180])
    lr = rng.choice([2e-4, 3e-4, 5e-4])  # NeRF: 5e-4
    extent = rng.choice([3_000.0, 4_000.0, 5_000.0])  # metres across
    top = rng.choice([1_500.0, 2_000.0])  # metres up

    g = torch.Generator().manual_seed(340_000 + seed)
    centres = torch.rand(4, 2, generator=g) * extent
    amps = (torch.rand(4, generator=g) - 0.5) * 400.0  # +-2 hPa
    span = torch.tensor([extent, extent, top])
    xyz = torch.rand(steps * batch, 3, generator=g) * span
    pressure = _field(xyz, centres, amps)
    if fixed:
        coords = 2.0 * xyz / span - 1.0
        target = (pressure - pressure.mean()) / pressure.std()
    else:
        coords, target = xyz, pressure
    batches = [
        (coords[i * batch : (i + 1) * batch], target[i * batch : (i + 1) * batch])
        for i in range(steps)
    ]

    torch.manual_seed(seed)
    layers: list[nn.Module] = [PositionalEncoding(freqs)]
    fan_in = 6 * freqs
    for _ in range(depth):
        layers += [nn.Linear(fan_in, width), nn.ReLU()]
        fan_in = width
    layers.append(nn.Linear(width, 1))
    model = nn.Sequential(*layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
