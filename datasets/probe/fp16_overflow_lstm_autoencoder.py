"""fp16_overflow: the window log-energy of an LSTM process-signal autoencoder overflows float16.

Mechanism: an anomaly-detection autoencoder reconstructs windows of C = 3-6 process sensors over
one batch cycle (384-512 samples: each channel follows its own smooth profile, shifted in time
and scaled by the load of the batch, log-normal; the data are standardised with the global mean
and std). A Linear projection embeds every sample into d = 48-64 features; the features are
average-pooled into frames of 8-16 samples, an LSTM encodes the frames and, as MFCC pipelines
append the frame log-energy c0, a ``LogEnergy`` module adds the window's log-energy: log1p of
the sum of the squared projected features over all samples and features. A Linear bottleneck,
an LSTM decoder fed the latent at every frame and a Linear output projection (one frame of
samples per step) give the reconstruction (MSE). The run is under ``torch.autocast(float16)``
with a GradScaler: the projection's output is float16, and on the CPU autocast keeps ``h * h``
and ``sum`` in float16 too, so the energy, a sum of T x d = 18-33 thousand terms, holds at most
65504. The squares themselves are small (|h| is a few units at most), but their sum is 2-4e4
for a median window and passes 65504 for a loud one (or, as the projection's weights grow
during training, for ordinary ones): it is inf, the log-energy is inf, the bottleneck turns it
into inf/NaN and the loss is NaN. The GradScaler cannot help: it scales gradients, not a forward
sum. The step is the first batch whose loudest window overflows, which depends on the seed's
load spread, window length, width and learning rate (from a few steps to a few tens).

ORIGIN: ``energy``, the LogEnergy module whose float16 sum overflows first (its input, the
projection's output, is finite and modest).
Fixed: the same run with the energy computed in float32 (autocast disabled and the features
upcast inside LogEnergy), the "fp32 for the op" fix; the function computed is unchanged.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "energy"
SOURCE = (
    "Reports of NaN losses under float16 AMP from hand-written energy / power features "
    "(sum of squares over a long window or spectrogram, e.g. torchaudio and speech front-ends "
    "computing power or log-energy in half precision) whose sum passes 65504; the usual fix "
    "is to compute that reduction in float32. Log-energy feature as in MFCC's c0; LSTM "
    "autoencoders for vibration anomaly detection (Malhotra et al. 2016, EncDec-AD)."
)


class LogEnergy(nn.Module):
    """log(1 + sum over time and features of h^2) per window; ``fp32`` computes it in float32."""

    def __init__(self, fp32: bool) -> None:
        super().__init__()
        self.fp32 = fp32

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if self.fp32:
            with torch.autocast(device_type="cpu", enabled=False):
                h = h.float()
                return torch.log1p((h * h).sum(dim=(1, 2))).unsqueeze(1)
        return torch.log1p((h * h).sum(dim=(1, 2))).unsqueeze(1)  # float16: inf past 65504


class LSTMAutoencoder(nn.Module):
    def __init__(
        self, channels: int, dim: int, hidden: int, latent: int, frame: int, fp32: bool
    ) -> None:
        super().__init__()
        self.in_proj = nn.Linear(channels, dim)
        self.pool = nn.AvgPool1d(frame)
        self.encoder = nn.LSTM(dim, hidden, batch_first=True)
        self.energy = LogEnergy(fp32)
        self.bottleneck = nn.Linear(hidden + 1, latent)
        self.decoder = nn.LSTM(latent, hidden, batch_first=True)
        self.out_proj = nn.Linear(hidden, frame * channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        h = self.in_proj(x)  # (B, T, dim), per sample
        frames = self.pool(h.transpose(1, 2)).transpose(1, 2)  # (B, T / frame, dim)
        _, (last, _) = self.encoder(frames)
        z = self.bottleneck(torch.cat([last[-1], self.energy(h).to(last.dtype)], dim=1))
        out, _ = self.decoder(z.unsqueeze(1).expand(-1, frames.shape[1], -1))
        return self.out_proj(out).reshape(b, t, c)


def _windows(g: torch.Generator, n: int, length: int, channels: int, spread: float) -> torch.Tensor:
    """Batch-process cycles: each channel follows its own smooth profile over the cycle (ramp,
    plateau, ramp down, with a few wiggles), shifted in time, scaled by the load of the batch
    (log-normal) and noisy."""
    t = torch.linspace(0.0, 1.0, length).view(1, length, 1)
    k = torch.arange(1, 4, dtype=torch.float32)
    coef = torch.randn(channels, 3, generator=g) / k
    shift = 0.1 * torch.randn(n, 1, 1, generator=g)
    tt = t + shift
    profile = torch.stack(
        [
            sum(coef[c, j] * torch.sin(math.pi * k[j] * tt[..., 0]) for j in range(3))
            for c in range(channels)
        ],
        dim=-1,
    )
    amp = torch.exp(spread * torch.randn(n, 1, 1, generator=g))
    return amp * profile + 0.1 * torch.randn(n, length, channels, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([3, 4, 6])
    dim = rng.choice([48, 64])
    hidden = rng.choice([24, 32])
    latent = rng.choice([8, 12])
    frame = rng.choice([8, 16])
    length = rng.choice([384, 512])
    batch = rng.choice([16, 24])
    steps = rng.choice([100, 120, 140])
    lr = rng.choice([2e-3, 3e-3, 5e-3])
    spread = rng.choice([0.4, 0.5])

    g = torch.Generator().manual_seed(330_000 + seed)
    raw = _windows(g, steps * batch, length, channels, spread)
    x = (raw - raw.mean()) / raw.std()  # global standardisation, as fitted on the training set
    batches = []
    for i in range(steps):
        window = x[i * batch : (i + 1) * batch]
        batches.append((window, window))  # an autoencoder: the target is the input

    torch.manual_seed(seed)
    model = LSTMAutoencoder(channels, dim, hidden, latent, frame, fp32=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.float16,
        "scaler": scaler,
    }
