"""Wind-turbine SCADA normal-behaviour model (NBM): an LSTM predicts the gearbox-bearing
temperature from 10-minute sequences of wind speed, active power, rotor speed and ambient
temperature (the standard condition-monitoring set-up of Zaher et al. / Bangalore & Tjernberg).

Mechanism: the SCADA logger writes -9999 for a missing reading.  The target column was
standardised with statistics computed on the valid rows, but the sentinel rows were not
filtered, so one or two consecutive mid-run batches (a logger outage) hold a few targets of about -1000 standard deviations.  The
MSE on that batch is ~1e5-1e6 times normal, the SGD+momentum step on the output layer and
the LSTM is enormous, and the weights / loss go non-finite (or the LSTM gates are left
saturated) -- an otherwise healthy run is destroyed by one corrupt batch.

ORIGIN: None -- the fault is in the data, not in a module.

Fix: drop the sentinel rows (here: replace them with valid rows from the same batch before
training); everything else is identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "SCADA missing-value sentinel (-9999) left in the target column of a wind-turbine NBM; common in wind SCADA open data (e.g. Kelmarsh/Penmanshiel) and NBM papers"

_CFG = {0: dict(h=32, lr=0.05, bs=32, steps=80, bad=(30,), nbad=3),
        1: dict(h=48, lr=0.04, bs=48, steps=100, bad=(35, 36), nbad=5),
        2: dict(h=24, lr=0.08, bs=24, steps=70, bad=(20,), nbad=2)}

_T_MEAN, _T_STD = 55.0, 8.0


class NBM(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.lstm = nn.LSTM(4, h, batch_first=True)
        self.head = nn.Linear(h, 1)

    def forward(self, x):
        o, _ = self.lstm(x)
        return self.head(o[:, -1])


def _batch(g, n, L=18):
    ws = 4 + 8 * torch.rand(n, 1, generator=g) + 0.5 * torch.randn(n, L, generator=g)
    pw = (ws.clamp(3, 12) - 3) ** 3 / 729.0
    rs = ws.clamp(3, 12) / 12.0
    amb = 0.5 * torch.randn(n, 1, generator=g).expand(n, L)
    x = torch.stack([(ws - 8) / 3, pw * 2 - 1, rs * 2 - 1, amb], -1)
    temp = _T_MEAN + 15 * pw[:, -6:].mean(1, keepdim=True) + 6 * amb[:, :1] + 0.5 * torch.randn(n, 1, generator=g)
    return x, temp


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    model = NBM(c["h"])
    opt = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=0.9)
    batches = []
    for s in range(c["steps"]):
        x, temp = _batch(g, c["bs"])
        if s in c["bad"]:
            idx = torch.randperm(c["bs"], generator=g)[: c["nbad"]]
            if fixed:
                temp[idx] = temp[(idx + c["nbad"]) % c["bs"]]  # sentinel rows dropped/replaced
                x[idx] = x[(idx + c["nbad"]) % c["bs"]]
            else:
                temp[idx] = -9999.0  # logger missing-value code
        y = (temp - _T_MEAN) / _T_STD
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=c["steps"])
