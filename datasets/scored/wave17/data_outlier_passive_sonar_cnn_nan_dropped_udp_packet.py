"""Passive-sonar vessel classifier (ShipsEar/DeepShip style): log-power spectrogram of hydrophone
audio -> 1D CNN over time with frequency bins as channels -> ship class.

Mechanism: the hydrophone recorder streams over UDP; the loader fills a dropped packet with NaN
(np.full(..., np.nan) placeholder) and never repairs it. Every window that overlaps that gap
produces NaN STFT bins, so the one batch that contains it gives a NaN loss and NaN gradients that
poison the Adam state and all weights. Training was calm until then. ORIGIN is None: the corrupt
batch, not a module, is the origin. Fix: repair the gap (zero-fill / nan_to_num) before the STFT.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "DeepShip/ShipsEar passive sonar CNN; NaN-filled dropped network packets in hydrophone streams"

N_FFT, HOP = 128, 64


def _feats(wav):
    spec = torch.stft(wav, N_FFT, HOP, window=torch.hann_window(N_FFT), return_complex=True)
    return torch.log(spec.abs() ** 2 + 1e-6)  # (B, F, T)


def _batch(g, n, T, corrupt, fixed):
    y = torch.randint(0, 4, (n,), generator=g)
    t = torch.arange(T) / 4000.0
    blade = torch.tensor([110.0, 180.0, 260.0, 400.0])[y].view(n, 1)  # blade-rate tonal
    f0 = blade * (1 + 0.05 * torch.rand(n, 1, generator=g))
    wav = 0.5 * torch.randn(n, T, generator=g)
    for h in (1, 2, 3):
        wav = wav + (0.6 / h) * torch.sin(2 * math.pi * h * f0 * t)
    if corrupt:
        i = int(torch.randint(0, n, (1,), generator=g))
        s = int(torch.randint(0, T - 512, (1,), generator=g))
        wav[i, s:s + 512] = float("nan")  # dropped packet placeholder
        if fixed:
            wav = torch.nan_to_num(wav, nan=0.0)
    x = _feats(wav)
    x = (x + 4.0) / 4.0
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [32, 48, 24][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [16, 8, 24][seed % 3]
    bad_step = [23, 41, 57][seed % 3]
    steps = 80
    F_ = N_FFT // 2 + 1
    model = nn.Sequential(
        nn.Conv1d(F_, width, 3, padding=1), nn.BatchNorm1d(width), nn.ReLU(),
        nn.Conv1d(width, width, 3, padding=1), nn.BatchNorm1d(width), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(width, 4))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_batch(g, bs, 4000, i == bad_step, fixed) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
