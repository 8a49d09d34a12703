"""unscaled_inputs: a GRU forecaster fed raw-unit sensor series and target (Adam or AdamW, L1).

Mechanism: an energy-load forecaster reads windows of 12-24 hourly readings of 3-6 channels in
their raw units (the load itself in kW, ~1e3-1e4; outdoor temperature in kelvin, ~290; solar
irradiance in W/m^2, ~1e2-1e3; a cumulative meter count, ~1e4-1e5) and predicts the next hour's
load in kW, with no standardisation anywhere. The GRU's gate and candidate pre-activations are then
in the tens to thousands: every sigmoid and tanh sits at 0 or +-1, the hidden state is a
near-constant sign pattern that says nothing about the inputs, and the gradient back to the GRU
weights is ~0. The only way left to lower the loss is for the linear head to reach a target of
~1e3-1e4 from features of size <= 1, and Adam(W) moves each weight by about lr per step, so after a
few hundred steps the output has moved by tens of kW: the L1 loss (~1e3 kW) stays where it started.
A stall, with a huge loss from step 0.

ORIGIN is None: the cause is in the data pipeline (no scaling), before any module; the GRU only
receives it.
Fixed: the same model, optimizer and windows with every channel and the target standardised
(z-scores with the mean and std of the training data); the loss falls.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = (
    "The PyTorch forum / Stack Overflow staple 'LSTM/GRU time-series forecaster does not learn, "
    "predicts a constant' on raw-valued series (loads in kW, prices, sensor counts): recurrent "
    "gates saturate on unscaled inputs; the standard answer is to scale inputs and target "
    "(StandardScaler / MinMaxScaler), as in the TensorFlow time-series tutorial's normalisation."
)

# Raw units of the candidate channels: (location, spread), channel 0 is the load itself.
_CHANNELS = [
    (4000.0, 1200.0),  # load, kW
    (288.0, 8.0),  # outdoor temperature, K
    (450.0, 300.0),  # solar irradiance, W/m^2
    (3.0e4, 6.0e3),  # cumulative meter count
    (1013.0, 10.0),  # air pressure, hPa
    (60.0, 18.0),  # relative humidity, %
]


class Forecaster(nn.Module):
    def __init__(self, d_in: int, hidden: int) -> None:
        super().__init__()
        self.gru = nn.GRU(d_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([3, 4, 5, 6])
    hidden = rng.choice([16, 24, 32, 48])
    seq = rng.choice([12, 16, 20, 24])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([150, 200, 250])
    lr = rng.choice([1e-3, 2e-3, 3e-3])
    optim = rng.choice(["adam", "adamw"])

    g = torch.Generator().manual_seed(120_000 + seed)
    n = steps * batch
    # Latent standardised series: AR(1) per channel, each channel partly driven by the previous.
    phi = 0.6 + 0.35 * torch.rand(d_in, generator=g)
    s = torch.zeros(n, seq + 1, d_in)
    s[:, 0] = torch.randn(n, d_in, generator=g)
    for t in range(1, seq + 1):
        eps = torch.randn(n, d_in, generator=g)
        s[:, t] = phi * s[:, t - 1] + (1.0 - phi**2).sqrt() * eps
        s[:, t, 0] = s[:, t, 0] + 0.4 * s[:, t - 1, 1 % d_in]  # load follows temperature
    s = s / s.flatten(0, 1).std(0)
    loc = torch.tensor([c[0] for c in _CHANNELS[:d_in]])
    spread = torch.tensor([c[1] for c in _CHANNELS[:d_in]])
    x_raw = loc + spread * s[:, :seq]
    # Next hour's load: its own persistence, the weather, and a nonlinear interaction.
    u = s[:, seq, 0] + 0.3 * torch.tanh(s[:, seq - 1, 0] * s[:, seq - 1, 1 % d_in])
    y_raw = (loc[0] + spread[0] * u + 50.0 * torch.randn(n, generator=g)).unsqueeze(1)
    if fixed:
        flat = x_raw.flatten(0, 1)
        x = (x_raw - flat.mean(0)) / flat.std(0)
        y = (y_raw - y_raw.mean()) / y_raw.std()
    else:
        x, y = x_raw, y_raw
    batches = [
        (x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch]) for i in range(steps)
    ]

    torch.manual_seed(seed)
    model = Forecaster(d_in, hidden)
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.L1Loss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
