"""HEALTHY: "Deep Filtering" (George & Huerta 2018) style 1-D CNN detecting compact-binary
chirps in whitened detector strain, trained with the SNR curriculum of that paper: start
with loud injections and lower the optimal SNR in stages.

Why it looks alarming but is fine
---------------------------------
* The loss *rises* at every curriculum stage: each drop of the injection SNR makes the
  positives harder and the BCE jumps back up (sometimes close to ln 2 for a few steps)
  before the network adapts; a loss curve whose stage minima increase over time looks
  like a model that is getting worse.
* At the end the network works at low SNR, so its final BCE is higher than its best
  high-SNR value -- yet far below the ln 2 of the start.
* Inputs are raw whitened strain (unit-variance noise, signal buried below the noise
  floor), the first conv sees mostly noise and gradients are noisy from batch to batch.
Everything stays finite; the fixed run is identical.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("George & Huerta, 'Deep Neural Networks to Enable Real-time Multimessenger "
          "Astrophysics' (Deep Filtering, PRD 2018): CNN on whitened LIGO strain trained "
          "with a decreasing-SNR curriculum")


def _chirps(g, B, T, fs):
    t = torch.arange(T, dtype=torch.float32) / fs
    tc = (0.55 + 0.4 * torch.rand(B, 1, generator=g)) * T / fs          # merger time
    f0 = 20.0 + 25.0 * torch.rand(B, 1, generator=g)                    # Hz at t = 0
    tau = (tc - t).clamp_min(1.0 / fs)
    f = (f0 * (tau / tc) ** (-3.0 / 8.0)).clamp(max=0.45 * fs)
    phase = 2 * math.pi * torch.cumsum(f, dim=1) / fs + 2 * math.pi * torch.rand(B, 1, generator=g)
    amp = (f / f0) ** (2.0 / 3.0)
    ring = torch.exp(-((t - tc).clamp_min(0.0)) * 60.0)
    h = amp * torch.cos(phase) * torch.where(t < tc, torch.ones_like(ring), ring)
    return h / h.norm(dim=1, keepdim=True)                              # unit optimal SNR


class DeepFilter(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(1, c, 16), nn.MaxPool1d(4), nn.ReLU(),
            nn.Conv1d(c, 2 * c, 8, dilation=2), nn.MaxPool1d(4), nn.ReLU(),
            nn.Conv1d(2 * c, 4 * c, 8, dilation=2), nn.ReLU(),
            nn.AdaptiveMaxPool1d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(4 * c, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.head(self.features(x)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(T=512, c=16, B=32, lr=2e-3, snrs=(20, 14, 10, 8), per=45),
           dict(T=384, c=12, B=48, lr=2e-3, snrs=(16, 11, 8), per=50),
           dict(T=512, c=20, B=24, lr=1.5e-3, snrs=(25, 16, 12, 9, 8), per=32)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(150914 + seed)
    fs = 256.0
    model = DeepFilter(cfg["c"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for snr in cfg["snrs"]:
        for _ in range(cfg["per"]):
            B, T = cfg["B"], cfg["T"]
            noise = torch.randn(B, T, generator=g)
            y = (torch.rand(B, generator=g) < 0.5).float()
            h = _chirps(g, B, T, fs) * snr
            x = noise + y[:, None] * h
            batches.append((x.unsqueeze(1), y))
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=len(batches))
