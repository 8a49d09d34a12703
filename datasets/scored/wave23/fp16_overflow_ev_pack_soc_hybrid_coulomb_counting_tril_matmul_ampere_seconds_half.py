"""Hybrid (physics + learned) state-of-charge estimation for an EV battery pack: the model
integrates the measured pack current (Coulomb counting) and adds a learned correction
from a small dilated 1-D CNN over (voltage, current, temperature); the initial SoC is
estimated from the first voltage samples by a small MLP. Training runs under
`torch.autocast(dtype=torch.float16)` to halve activation memory; MSE on SoC; Adam.

Mechanism: the Coulomb counter is vectorised over the window as a matmul with a fixed
lower-triangular matrix, `q = tril @ (I * dt)`, in ampere-seconds, and only afterwards
divided by 3600 * Q_nom. Under autocast that matmul runs in float16. With pack currents
of ~30..120 A on average and dt = 10 s, the running charge passes 65504 A*s after ~55..220
samples (10..35 minutes of driving), so `q` becomes inf inside most of the 192..256-sample
windows, the SoC trajectory is -inf and the very first loss is inf. The learned parts are
fine; the overflow is purely the half-precision range of that one op (in float32 the same
expression is harmless, max ~4e5).

ORIGIN = "coulomb": the CoulombCounter module is where the first non-finite values appear
(its matmul output), everything downstream only propagates them.

Fix: run the Coulomb counter in float32 (autocast disabled inside that module), the
usual "fp32 for the op" treatment of accumulations; the rest stays in fp16 autocast, same
model, data, optimiser and steps.
"""
import math

import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "coulomb"
SOURCE = (
    "Hybrid Coulomb-counting + neural-correction SoC estimators (e.g. Plett's EKF-style "
    "CC models with learned residuals); PyTorch AMP docs: matmul runs in float16 under "
    "autocast and float16 max is 65504, so large accumulations must be done in float32."
)

DT = 10.0           # s
Q_NOM = 200.0       # Ah (pack)


def _ocv(soc):
    return 3.3 + 0.7 * soc + 0.1 * torch.tanh(8 * (soc - 0.1)) - 0.08 * torch.exp(-20 * soc)


def _drive_cycles(g, n, T):
    """Random urban/highway current profiles (A), SoC ground truth and measured V/T."""
    soc0 = 0.4 + 0.55 * torch.rand(n, 1, generator=g)
    level = 40 + 80 * torch.rand(n, 1, generator=g)
    phases = torch.randn(n, T, generator=g).cumsum(1) * 0.05
    current = level * (0.6 + 0.4 * torch.sin(phases)) + 15 * torch.randn(n, T, generator=g)
    regen = (torch.rand(n, T, generator=g) < 0.08).float()
    current = current * (1 - 1.5 * regen)                                           # braking regen
    true_soc = soc0 - torch.cumsum(current * DT, 1) / (3600 * Q_NOM)
    temp = 25 + 10 * torch.rand(n, 1, generator=g) + torch.cumsum(current.abs(), 1) * 1e-4
    r0 = 0.002 * (1 + 0.02 * (25 - temp).clamp_min(0))
    v = 96 * (_ocv(true_soc) - r0 * current / 96 * 10) + 0.2 * torch.randn(n, T, generator=g)
    feats = torch.stack([(v - 350) / 20, (current - 60) / 40, (temp - 30) / 5], 1)   # (n, 3, T)
    return (feats.float(), current.float()), true_soc.float()


class CoulombCounter(nn.Module):
    def __init__(self, T, fp32):
        super().__init__()
        self.register_buffer("tril", torch.tril(torch.ones(T, T)))
        self.fp32 = fp32

    def forward(self, current):                         # (B, T) amperes -> (B, T) ampere-seconds
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return (current.float() * DT) @ self.tril.T
        return (current * DT) @ self.tril.T


class HybridSoC(nn.Module):
    def __init__(self, T, ch, n_blocks, fp32_counter):
        super().__init__()
        self.coulomb = CoulombCounter(T, fp32_counter)
        self.init_soc = nn.Sequential(nn.Linear(3 * 8, 32), nn.ReLU(), nn.Linear(32, 1))
        layers, c = [], 3
        for i in range(n_blocks):
            layers += [nn.Conv1d(c, ch, 3, padding=2 ** i, dilation=2 ** i), nn.ReLU()]
            c = ch
        self.tcn = nn.Sequential(*layers)
        self.corr = nn.Conv1d(ch, 1, 1)

    def forward(self, feats, current):
        q = self.coulomb(current)
        soc0 = 0.7 + 0.3 * torch.tanh(self.init_soc(feats[:, :, :8].flatten(1)))
        soc_cc = soc0 - q / (3600 * Q_NOM)
        corr = 0.05 * torch.tanh(self.corr(self.tcn(feats)).squeeze(1))
        return soc_cc + corr


def build(seed: int, fixed: bool = False) -> dict:
    T = [256, 192, 224][seed % 3]
    ch = [32, 24, 48][seed % 3]
    n_blocks = [3, 4, 3][seed % 3]
    batch = [16, 24, 12][seed % 3]
    lr = [1e-3, 2e-3, 1e-3][seed % 3]
    steps = 80

    g = torch.Generator().manual_seed(1200 + seed)
    batches = [_drive_cycles(g, batch, T) for _ in range(steps)]

    torch.manual_seed(seed)
    model = HybridSoC(T, ch, n_blocks, fp32_counter=fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
