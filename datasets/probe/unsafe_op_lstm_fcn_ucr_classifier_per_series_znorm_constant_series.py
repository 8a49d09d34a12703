"""LSTM-FCN (Karim et al. 2017) time-series classifier that z-normalises every series inside
the model ((x - mean) / std per series, as UCR preprocessing prescribes).  A sensor that was
idle for the whole window produces a perfectly constant series -- legitimate data, class 'idle'.

Mechanism: for a constant series std == 0 and x - mean == 0, so the normaliser computes 0/0 = NaN;
the NaN propagates through the FCN and LSTM branches into the loss and then into every weight.
ORIGIN: `znorm`, the normalisation module that produces the first NaN.
Fix: divide by std.clamp_min(1e-5) (a constant series normalises to zeros).
"""
import math, torch, torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "znorm"
SOURCE = "LSTM-FCN (Karim et al. 2017) / UCR archive per-series z-normalisation; 'NaN with constant time series' reports"


class ZNorm(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.safe = safe

    def forward(self, x):
        mu = x.mean(1, keepdim=True)
        sd = x.std(1, keepdim=True)
        if self.safe:
            sd = sd.clamp_min(1e-5)
        return (x - mu) / sd


class LSTMFCN(nn.Module):
    def __init__(self, H, F, K, safe):
        super().__init__()
        self.znorm = ZNorm(safe)
        self.lstm = nn.LSTM(1, H, batch_first=True)
        self.fcn = nn.Sequential(nn.Conv1d(1, F, 7, padding=3), nn.BatchNorm1d(F), nn.ReLU(),
                                 nn.Conv1d(F, F, 5, padding=2), nn.BatchNorm1d(F), nn.ReLU())
        self.out = nn.Linear(H + F, K)

    def forward(self, x):
        z = self.znorm(x)
        h, _ = self.lstm(z.unsqueeze(-1))
        f = self.fcn(z.unsqueeze(1)).mean(2)
        return self.out(torch.cat([h[:, -1], f], 1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(H=16, F=32, bs=32, T=64, lr=3e-3, first=30, steps=80),
           dict(H=24, F=24, bs=24, T=48, lr=2e-3, first=55, steps=100),
           dict(H=12, F=40, bs=40, T=80, lr=5e-3, first=18, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(51 + seed)
    K = 4
    t = torch.arange(cfg["T"]).float() / cfg["T"]
    batches = []
    for k in range(cfg["steps"]):
        y = torch.randint(1, K, (cfg["bs"],), generator=g)
        ph = torch.rand(cfg["bs"], 1, generator=g) * 6.28
        x = 3.0 + torch.sin(2 * math.pi * y.view(-1, 1).float() * 2 * t + ph) + 0.2 * torch.randn(cfg["bs"], cfg["T"], generator=g)
        if k >= cfg["first"] and k % 5 == 0:
            x[0] = 2.5          # idle sensor: constant reading
            y[0] = 0
        batches.append((x, y))
    model = LSTMFCN(cfg["H"], cfg["F"], K, safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
