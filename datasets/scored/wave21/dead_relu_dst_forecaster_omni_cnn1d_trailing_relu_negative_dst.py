"""Geomagnetic Dst-index forecaster: 1D CNN over 24 h of OMNI solar-wind data, built with a trailing ReLU.

Mechanism: the network is assembled by a helper that appends nn.ReLU() after every Linear,
including the last one, so the regression output is ReLU(z). Dst is negative during storms and
the user scales it as Dst/100 nT (targets in roughly [-3, 0]). The optimiser pushes z down towards
the negative targets; within a few steps z < 0 for every sample, the output ReLU is dead, no
gradient reaches any layer, and the loss freezes at mean(y^2) (prediction 0 for everything).

ORIGIN: `head.3` (the trailing output ReLU that dies; upstream layers then receive zero gradient).
Fix: no activation after the last Linear (identity output), same optimiser, lr and data.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.3"
SOURCE = "Dst forecasting from OMNI solar-wind data with neural nets (e.g. Gruet et al. 2018); common bug: ReLU after the final regression layer with negative targets"


def mlp(sizes, trailing_act):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or trailing_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DstCNN(nn.Module):
    def __init__(self, nvar, c, hidden, trailing_act):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(nvar, c, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
                                  nn.Conv1d(c, c, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1))
        self.head = mlp([c, hidden, 1], trailing_act)

    def forward(self, x):
        return self.head(self.conv(x).flatten(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 12][seed % 3]
    hidden = [32, 16, 24][seed % 3]
    T = [24, 24, 48][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = [80, 60, 100][seed % 3]
    lr = [3e-3, 5e-3, 1e-2][seed % 3]
    batches = []
    for _ in range(steps):
        # standardised OMNI variables: Bz, |B|, V, n, P_dyn
        x = torch.randn(bs, 5, T, generator=g)
        x = torch.nn.functional.avg_pool1d(x, 5, 1, 2) * 2
        bz_south = torch.relu(-x[:, 0]).mean(1)
        v = x[:, 2].mean(1)
        dst = -(0.3 + 1.2 * bz_south * (1 + 0.3 * v).clamp(min=0.2)) - 0.05 * torch.rand(bs, generator=g)
        batches.append((x, dst))  # Dst / 100 nT
    model = DstCNN(5, c, hidden, trailing_act=not fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
