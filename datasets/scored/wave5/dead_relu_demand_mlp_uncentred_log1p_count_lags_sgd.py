"""Demand forecaster for a retail catalogue: a ReLU MLP reads 16 lagged weekly sales counts of a
product and regresses next week's standardised demand with MSE.  The count lags were
log1p-transformed "so they are on a sensible scale" but never centred, so every input sits around +3
with a spread of ~0.5.  Because all inputs share a large positive offset, each first-layer unit is
either on or off for *all* rows (a third are already off at init), and an SGD step changes a unit's
pre-activation by ~ -lr * delta * ||x||^2 (||x||^2 ~ 150) for every row at once.  With lr = 0.03 and
momentum the oscillating early updates switch the first-layer units off one after another (~90%
dead by step 50) and then the whole second hidden layer; the output collapses to its bias and the
loss ends at the level of a constant forecast.  Lowering the learning rate to 0.003 is the only
change in the fixed run (the features stay uncentred).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("LeCun et al. 'Efficient BackProp' (1998) sec. 4.3: non-zero-mean inputs make all weight "
          "updates of a unit share a sign; dying-ReLU reports with log-count features and SGD")

N_LAGS = 16


class DemandMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(N_LAGS, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                 nn.Linear(64, 1))

    def forward(self, x):
        return self.mlp(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(N_LAGS, generator=g) / math.sqrt(N_LAGS)
    steps, bs = 200, 128
    batches = []
    for _ in range(steps):
        z = torch.randn(bs, N_LAGS, generator=g)
        x = 3.0 + 0.5 * z                                    # log1p(count) lags, not centred
        y = z @ w + 0.5 * torch.sin(2.0 * z[:, 0]) + 0.3 * torch.randn(bs, generator=g)
        batches.append((x, y))
    model = DemandMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.003 if fixed else 0.03, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
