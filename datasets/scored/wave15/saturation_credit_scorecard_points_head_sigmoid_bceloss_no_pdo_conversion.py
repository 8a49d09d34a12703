"""Neural credit scorecard: a small MLP over standardised application/bureau features outputs a
score in scorecard *points* (base 600, PDO 20 convention: points = 600 + 20/ln2 * log-odds of
good), and the PD is obtained with nn.Sigmoid followed by nn.BCELoss.

Mechanism: the user fed the points straight into the sigmoid, forgetting the
(points - 600) * ln2 / 20 conversion back to log-odds.  The points head is initialised at the
base score (bias 600), so every sigmoid input is ~600: the sigmoid outputs exactly 1.0 in
float32, BCELoss clamps log(1 - p) at -100, and d sigmoid/dx = 0.  No gradient reaches the
network; the loss stays ~100 * default rate for the whole run.

ORIGIN: pd, the nn.Sigmoid that saturates.
Fix: convert points to log-odds before the sigmoid.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "pd"
SOURCE = "Siddiqi 'Credit Risk Scorecards' points/PDO scaling; nn.Sigmoid + nn.BCELoss saturation (PyTorch forum reports of constant BCE loss 100*p)"


class PointsScorecard(nn.Module):
    def __init__(self, n_in, width, convert):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.points = nn.Linear(width, 1)
        nn.init.constant_(self.points.bias, 600.0)
        self.pd = nn.Sigmoid()
        self.convert = convert

    def forward(self, x):
        pts = self.points(self.body(x)).squeeze(-1)
        z = -(pts - 600.0) * math.log(2) / 20.0 if self.convert else pts  # log-odds of default
        return self.pd(z)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=32, bs=128, lr=1e-2), dict(w=64, bs=64, lr=5e-3), dict(w=24, bs=96, lr=1e-2)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1100 + seed)
    n_in = 16
    model = PointsScorecard(n_in, cfg["w"], convert=fixed)
    w = torch.randn(n_in, generator=g) * 1.2
    steps = 80
    batches = []
    for _ in range(steps):
        x = torch.randn(cfg["bs"], n_in, generator=g)
        y = (torch.rand(cfg["bs"], generator=g) < torch.sigmoid(x @ w - 1.0)).float()
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(), batches=batches, steps=steps)
