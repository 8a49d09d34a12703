"""Healthy: multi-step load forecaster (GRU encoder over the history, linear decoder for the
next H values) trained with the soft-DTW loss of Cuturi & Blondel (gamma = 0.5), written by
hand as the usual dynamic programme with a soft-min.

Why it looks suspicious but is healthy: soft-DTW is not a distance; the soft-min of three
near-equal costs is *below* their minimum (by up to gamma * log 3 per cell), so once the
forecast is close to the target the loss becomes negative and keeps decreasing towards a
negative value set by gamma and H. Gradients are small and dense; nothing diverges and the
forecasts improve throughout.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Cuturi & Blondel 2017 'Soft-DTW: a Differentiable Loss Function for Time-Series'; Le Guen & Thome "
          "2019 DILATE (soft-DTW for forecasting); tslearn / pysdtw implementations, whose docs note the "
          "value can be negative")


class GRUForecaster(nn.Module):
    def __init__(self, hidden, layers, horizon):
        super().__init__()
        self.gru = nn.GRU(1, hidden, num_layers=layers, batch_first=True)
        self.dec = nn.Linear(hidden, horizon)

    def forward(self, hist):
        h, _ = self.gru(hist.unsqueeze(-1))
        return self.dec(h[:, -1])


def soft_dtw(pred, target, gamma=0.5):
    B, n = pred.shape
    m = target.shape[1]
    D = (pred.unsqueeze(2) - target.unsqueeze(1)) ** 2
    inf = torch.full((B,), 1e10)
    prev = [torch.zeros(B)] + [inf] * m          # row i-1 of R (R[0][0] = 0)
    for i in range(1, n + 1):
        cur = [inf]
        for j in range(1, m + 1):
            r = torch.stack([prev[j - 1], prev[j], cur[j - 1]], 0)
            softmin = -gamma * torch.logsumexp(-r / gamma, dim=0)
            cur.append(D[:, i - 1, j - 1] + softmin)
        prev = cur
    return prev[m].mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [48, 64, 32][seed % 3]
    layers = 1 + seed % 2
    batch = [32, 24, 48][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    T, H, steps = 48, 12, 80

    torch.manual_seed(seed)
    model = GRUForecaster(hidden, layers, H)

    batches = []
    for _ in range(steps):
        t = torch.arange(T + H).float()[None]
        phase = 6.283 * torch.rand(batch, 1, generator=g)
        period = 12.0 + 4.0 * torch.rand(batch, 1, generator=g)
        level = 0.5 * torch.randn(batch, 1, generator=g)
        series = level + torch.sin(6.283 * t / period + phase) + 0.1 * torch.randn(batch, T + H, generator=g)
        batches.append((series[:, :T], series[:, T:]))

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": soft_dtw, "batches": batches, "steps": steps}
