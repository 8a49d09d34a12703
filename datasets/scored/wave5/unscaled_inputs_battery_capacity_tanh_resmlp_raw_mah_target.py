"""Battery-health regressor for a cell-production line: a small residual MLP with tanh blocks maps
20 standardised cycling features (voltage-curve statistics, internal resistance, temperature rise)
to the cell's remaining capacity.  The features were standardised but the TARGET was left in raw
mAh (mean ~2500, sd ~150).  The tanh hidden features are bounded by 1, so the prediction can only
grow by ~(width + 1) * lr per Adam step; the MSE starts at ~6e6, is ~99.6% "missing offset", and
after 150 steps the predictions have crawled only a few mAh towards 2500: the loss is still
~99% of its start, i.e. a stall that is pure target scale.  Standardising the target (predicting
z-units and de-standardising downstream) is the only change.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("Severson et al. 2019 'Data-driven prediction of battery cycle life' style features; the "
          "standard advice to standardise regression targets (e.g. sklearn TransformedTargetRegressor, "
          "CS231n preprocessing notes)")

N_FEAT, W = 20, 48
MU, SD = 2500.0, 150.0


class TanhBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(W, W)
        self.fc2 = nn.Linear(W, W)

    def forward(self, h):
        return h + self.fc2(torch.tanh(self.fc1(h)))


class CapacityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(N_FEAT, W)
        self.blocks = nn.Sequential(TanhBlock(), TanhBlock())
        self.act = nn.Tanh()
        self.head = nn.Linear(W, 1)

    def forward(self, x):
        return self.head(self.act(self.blocks(self.stem(x)))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(N_FEAT, generator=g) / math.sqrt(N_FEAT)
    steps, bs = 150, 128
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, N_FEAT, generator=g)
        z = x @ w + 0.4 * torch.tanh(x[:, 0] * x[:, 1]) + 0.2 * torch.randn(bs, generator=g)
        mah = MU + SD * z                               # raw capacity in mAh
        batches.append((x, (mah - MU) / SD if fixed else mah))
    model = CapacityNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
