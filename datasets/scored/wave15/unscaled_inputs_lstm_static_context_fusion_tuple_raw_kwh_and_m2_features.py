"""Building energy forecaster with two inputs, model(history, static): an LSTM reads
the past 24 hourly meter readings and an MLP embeds static building attributes
(floor area in m2, year built, occupancy); the two are concatenated and a head
predicts next-hour consumption.

Mechanism: the features and the target were fed in raw units - readings in kWh
(hundreds to thousands), floor area ~1e3-1e4 m2, year ~2000 - and the target in kWh.
The static MLP's first layer receives inputs of order 1e3, saturating nothing but
producing pre-activations in the thousands, the LSTM gates saturate on the raw
history, and the MSE starts around 1e6. The gradients of the first layer scale with the
raw inputs (~1e3) times the error (~1e3), so the first SGD+momentum step is huge,
the outputs overshoot by orders of magnitude and the loss becomes non-finite
within a few steps.

ORIGIN: `static_mlp.0`, the first layer receiving the unscaled static inputs (the
largest-magnitude ones).

Fix: standardise every input column and the target with training-set mean/std; the
model, optimiser and lr are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "static_mlp.0"
SOURCE = ("Energy-forecasting tutorials mixing LSTM history with static metadata; "
          "'loss huge and not decreasing' threads fixed by StandardScaler on X and y.")


class FusionForecaster(nn.Module):
    def __init__(self, n_static, h):
        super().__init__()
        self.lstm = nn.LSTM(1, h, batch_first=True)
        self.static_mlp = nn.Sequential(nn.Linear(n_static, h), nn.ReLU(), nn.Linear(h, h))
        self.head = nn.Sequential(nn.Linear(2 * h, h), nn.ReLU(), nn.Linear(h, 1))

    def forward(self, history, static):
        _, (hN, _) = self.lstm(history.unsqueeze(-1))
        z = torch.cat([hN[-1], self.static_mlp(static)], dim=-1)
        return self.head(z).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=32, bs=32, lr=1e-2, steps=80),
           dict(h=24, bs=48, lr=2e-2, steps=90),
           dict(h=48, bs=24, lr=1e-2, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6060 + seed)
    model = FusionForecaster(3, cfg["h"])
    T = 24
    raw = []
    for _ in range(cfg["steps"]):
        area = 800 + 9000 * torch.rand(cfg["bs"], generator=g)              # m2
        year = 1950 + 70 * torch.rand(cfg["bs"], generator=g)
        occ = 10 + 300 * torch.rand(cfg["bs"], generator=g)
        base = 0.08 * area + 0.5 * occ - 2.0 * (year - 1950)
        t = torch.arange(T + 1).float()
        daily = 1 + 0.4 * torch.sin(2 * 3.14159 * (t + 24 * torch.rand(cfg["bs"], 1, generator=g)) / 24)
        series = base.unsqueeze(1) * daily + 20 * torch.randn(cfg["bs"], T + 1, generator=g)
        raw.append((series[:, :T], torch.stack([area, year, occ], 1), series[:, T]))
    if fixed:   # statistics from the training data
        H = torch.cat([r[0] for r in raw]); S = torch.cat([r[1] for r in raw]); Y = torch.cat([r[2] for r in raw])
        hm, hs, sm, ss, ym, ys = H.mean(), H.std(), S.mean(0), S.std(0), Y.mean(), Y.std()
        raw = [((h - hm) / hs, (s - sm) / ss, (y - ym) / ys) for h, s, y in raw]
    batches = [((h, s), y) for h, s, y in raw]
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=cfg["steps"])
