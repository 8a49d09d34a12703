"""Battery-management-system state-of-charge estimation with a GRU over windows of cell
voltage, pack current and temperature (Chemali et al. 2017 style recurrent SOC estimator).

Mechanism: the logged CAN bus occasionally drops the current frame; the decoder writes NaN
for the missing signal and the dataloader does not check.  One mid-run batch carries a few
windows with NaN current samples; the GRU propagates NaN into the prediction, the loss is
NaN and Adam writes NaN into every weight.  Before that batch the run is calm and converging.

ORIGIN: None -- a corrupt batch, not a module, is the cause.

Fix: drop the windows whose signals contain NaN (replaced by clean windows so the batch
size stays the same).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "NaN current samples from dropped CAN frames in BMS drive-cycle logs fed to a GRU/LSTM SOC estimator (Chemali 2017-style); common 'loss becomes nan mid-training' report"

_CFG = {0: dict(h=32, layers=1, lr=3e-3, bs=32, steps=80, bad=40),
        1: dict(h=24, layers=2, lr=2e-3, bs=16, steps=100, bad=63),
        2: dict(h=48, layers=1, lr=5e-3, bs=24, steps=60, bad=25)}


class SOCGRU(nn.Module):
    def __init__(self, h, layers):
        super().__init__()
        self.gru = nn.GRU(3, h, num_layers=layers, batch_first=True)
        self.head = nn.Sequential(nn.Linear(h, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        o, _ = self.gru(x)
        return self.head(o[:, -1])


def _batch(g, n, L=25):
    soc0 = 0.1 + 0.85 * torch.rand(n, 1, generator=g)
    cur = 0.5 * torch.randn(n, L, generator=g) + 0.3 * torch.randn(n, 1, generator=g)  # C-rate
    soc = soc0 - 0.004 * cur.cumsum(1)
    temp = 0.3 * torch.randn(n, 1, generator=g).expand(n, L)
    ocv = 3.2 + 0.9 * soc - 0.2 * (1 - soc) ** 4
    v = ocv - 0.08 * cur + 0.01 * torch.randn(n, L, generator=g)
    x = torch.stack([(v - 3.7) / 0.3, cur, temp], -1)
    return x, soc[:, -1:]


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    model = SOCGRU(c["h"], c["layers"])
    opt = torch.optim.Adam(model.parameters(), lr=c["lr"])
    batches = []
    for s in range(c["steps"]):
        x, y = _batch(g, c["bs"])
        if s == c["bad"]:
            rows = torch.randperm(c["bs"], generator=g)[:3]
            if not fixed:
                x[rows, 5:9, 1] = float("nan")  # dropped CAN current frames
            else:
                x2, y2 = _batch(g, 3)  # the corrupt windows are dropped and replaced
                x[rows], y[rows] = x2, y2
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=c["steps"])
