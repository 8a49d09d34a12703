"""CAMELS-style LSTM rainfall-runoff model (Kratzert et al. 2018/2019) trained on raw forcings and raw discharge.

Mechanism: the user feeds daily forcings straight from the CAMELS/Daymet files (precipitation in
mm/day, shortwave radiation in W/m2 ~ 100-400, vapour pressure in Pa ~ 300-2000, tmax/tmin in degC,
day length in seconds ~ 30000-50000) and regresses discharge in m3/s (hundreds to thousands).
The LSTM gates see pre-activations of thousands and are pinned at 0/1 from step 0, and the MSE on
raw m3/s is ~1e5-1e6; Adam moves the head bias by ~lr per step, so the loss barely moves: a stall.

ORIGIN: `lstm` is the first layer that receives the unscaled inputs.
Fix: standardise forcings and discharge with training-period mean/std (as NeuralHydrology does).
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "lstm"
SOURCE = "Kratzert et al. 2019 CAMELS LSTM / NeuralHydrology: forcings and discharge must be normalised; common forum reports of flat huge MSE on raw m3/s"


class StreamflowLSTM(nn.Module):
    def __init__(self, n_in, hidden):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.dropout = nn.Dropout(0.0)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(self.dropout(h[:, -1])).squeeze(-1)


def _forcings(g, n, T):
    day = torch.arange(T).float()[None, :] + torch.randint(0, 365, (n, 1), generator=g).float()
    season = torch.sin(2 * torch.pi * day / 365.0)
    prcp = torch.relu(torch.randn(n, T, generator=g) * 8 + 1) * (torch.rand(n, T, generator=g) < 0.4)
    srad = 250 + 120 * season + 20 * torch.randn(n, T, generator=g)
    tmax = 15 + 12 * season + 3 * torch.randn(n, T, generator=g)
    tmin = tmax - 10 - 2 * torch.rand(n, T, generator=g)
    vp = 900 + 500 * season + 80 * torch.randn(n, T, generator=g)
    dayl = 43200 + 9000 * season
    x = torch.stack([prcp, srad, tmax, tmin, vp, dayl], -1)
    # discharge (m3/s): catchment area scaling times a smoothed rainfall minus ET
    area = 200 + 800 * torch.rand(n, 1, generator=g)
    w = torch.exp(-torch.arange(T).flip(0).float() / 8.0)
    q = area.squeeze(1) * ((prcp * w).sum(1) / w.sum() * 0.6 + 0.5 - 0.02 * tmax[:, -1].clamp(min=0)).clamp(min=0.05)
    return x, q


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    hidden = [32, 24, 40][seed % 3]
    bs = [32, 48, 24][seed % 3]
    T = [30, 24, 36][seed % 3]
    steps = [120, 100, 140][seed % 3]
    lr = [1e-3, 2e-3, 1e-3][seed % 3]
    xs, qs = zip(*[_forcings(g, bs, T) for _ in range(steps)])
    X = torch.stack(xs); Q = torch.stack(qs)
    if fixed:
        xm = X.mean((0, 1, 2), keepdim=True); xsd = X.std((0, 1, 2), keepdim=True)
        X = (X - xm) / xsd
        Q = (Q - Q.mean()) / Q.std()
    model = StreamflowLSTM(6, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [(X[i], Q[i]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
