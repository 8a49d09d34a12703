"""Healthy: patch-transformer forecaster for satellite housekeeping telemetry, fp16 autocast
with a working GradScaler (some early steps skipped).

What a naive monitor might flag: the run uses float16 autocast; the GradScaler starts at
scale 2**24 (copied from a large-model config), so the first backward passes overflow in half
precision. The scaler detects the inf gradients, *skips* those optimizer steps (parameters
change by exactly zero, 4-6 of them) and halves the scale until the gradients are finite; it
keeps probing upwards later and skips an occasional step again. The loss itself is finite
all along and the model learns normally.

Model: the last 96 samples of 6 housekeeping channels (bus voltage, battery temperature,
solar-array current, reaction-wheel speed, ...) are cut into patches of 8, embedded, passed
through a small pre-LN transformer encoder, and a linear head forecasts the next 8 samples of
every channel (MSE on standardised channels). AdamW.

ORIGIN: None - nothing fails.
Fix: none needed (healthy); ``fixed=True`` returns the same run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP recipe (torch.amp.GradScaler: steps with inf/NaN gradients are skipped and "
          "the scale is reduced); PatchTST-style forecasting (Nie et al. 2023) applied to "
          "spacecraft housekeeping telemetry (ESA-ADB / OPS-SAT-like channels).")


class PatchForecaster(nn.Module):
    def __init__(self, n_ch, patch, n_patch, d_model, n_layers, horizon):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(patch * n_ch, d_model)
        self.pos = nn.Parameter(torch.randn(n_patch, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, 4, 2 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, horizon * n_ch)
        self.n_ch, self.horizon = n_ch, horizon

    def forward(self, x):
        b, t, c = x.shape
        p = x.reshape(b, t // self.patch, self.patch * c)
        h = self.encoder(self.embed(p) + self.pos)
        return self.head(h[:, -1]).view(b, self.horizon, c)


def _telemetry(g, n, T=96, H=8, C=6):
    period = 60.0 + 10 * torch.rand(n, 1, generator=g)                 # orbit in samples
    t0 = torch.rand(n, 1, generator=g) * 100
    t = t0 + torch.arange(T + H).float()
    ph = 2 * math.pi * t / period
    sun = (torch.sin(ph) > -0.35).float()                              # eclipse flag
    volt = 0.8 * sun + 0.1 * torch.sin(ph)
    temp = torch.cumsum(0.08 * (sun - 0.65), 1)
    temp = temp - temp.mean(1, keepdim=True)
    curr = sun * torch.clamp(torch.sin(ph + 0.3), min=0) * 1.5
    rw = 0.5 * torch.sin(ph * 2 + torch.rand(n, 1, generator=g))
    load = (torch.rand(n, 1, generator=g) - 0.5) + 0.2 * torch.sin(ph * 3)
    heater = torch.tanh(-temp * 2)
    x = torch.stack([volt, temp, curr, rw, load, heater], -1)
    x = x + 0.03 * torch.randn(n, T + H, C, generator=g)
    return x[:, :T], x[:, T:]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9090 + seed)
    d_model = [32, 48, 64][seed % 3]
    n_layers = [2, 1, 2][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [32, 24, 16][seed % 3]
    steps = 120
    model = PatchForecaster(6, 8, 12, d_model, n_layers, 8)
    batches = [_telemetry(g, bs) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
