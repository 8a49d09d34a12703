"""N-BEATS (generic blocks, doubly residual backcast/forecast) load forecaster trained with
Adagrad. Late in the run one batch is drawn around a meter that logged its failed-read code
0xFFFFFFFF (4294967295 kW) for six hours; standardised with clean-month stats these points are
~1e7 sigma. That single batch gives the weights gradients up to ~1e13: Adagrad makes one lr-sized
sign jump that wrecks the forecaster, and its never-decaying sum of g^2 then shrinks later steps by
orders of magnitude, so the loss stays at/above its starting level. fixed=True: the loader drops
windows whose raw readings are outside the meter's physical range.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "blocks.0.fc.0"
SOURCE = ("N-BEATS (Oreshkin et al., ICLR 2020) on smart-meter load; 0xFFFFFFFF failed-read "
          "sentinel readings in AMI smart-meter exports; Adagrad accumulator poisoning by one "
          "huge-gradient batch (sum of squared gradients never decays, Duchi et al. 2011).")

LOOKBACK, HORIZON, BATCH, STEPS = 48, 12, 128, 200


class Block(nn.Module):
    def __init__(self, width=128, theta=32):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(LOOKBACK, width), nn.ReLU(),
                                nn.Linear(width, width), nn.ReLU(),
                                nn.Linear(width, width), nn.ReLU())
        self.theta = nn.Linear(width, theta)
        self.backcast = nn.Linear(theta, LOOKBACK)
        self.forecast = nn.Linear(theta, HORIZON)

    def forward(self, x):
        t = self.theta(self.fc(x))
        return self.backcast(t), self.forecast(t)


class NBeats(nn.Module):
    def __init__(self, n_blocks=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(n_blocks)])

    def forward(self, x):
        f = 0.0
        for b in self.blocks:
            bc, fc = b(x)
            x = x - bc
            f = f + fc
        return f


def _series(g, n_series=16, length=3000):
    t = torch.arange(length, dtype=torch.float32)
    out = []
    for _ in range(n_series):
        base = 400 + 200 * torch.rand(1, generator=g)
        daily = 80 * torch.sin(2 * math.pi * t / 24 + 6 * torch.rand(1, generator=g))
        weekly = 40 * torch.sin(2 * math.pi * t / 168 + 6 * torch.rand(1, generator=g))
        noise = 10 * torch.randn(length, generator=g)
        out.append(base + daily + weekly + noise)
    return torch.stack(out)          # kW


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    raw = _series(g)
    mean, std = raw.mean(1, keepdim=True), raw.std(1, keepdim=True)   # stats from a clean month
    bad_step = 130 + int(torch.randint(0, 25, (1,), generator=g))
    # one meter logs its failed-read code during the period sampled by bad_step's batch
    glitch_series, glitch_t = 3, 1500
    raw[glitch_series, glitch_t:glitch_t + 6] = 4294967295.0   # 0xFFFFFFFF failed-read code
    z = (raw - mean) / std

    batches = []
    W = LOOKBACK + HORIZON
    for step in range(STEPS):
        s = torch.randint(0, raw.shape[0], (BATCH,), generator=g)
        if step == bad_step:   # this batch is drawn around the failed reads
            s[: BATCH // 4] = glitch_series
            t0 = glitch_t - torch.randint(0, W - 6, (BATCH,), generator=g)
        else:
            t0 = torch.randint(0, raw.shape[1] - W, (BATCH,), generator=g)
            t0 = torch.where((s == glitch_series) & (t0 > glitch_t - W) & (t0 < glitch_t + 6),
                             t0 - 2 * W, t0)
        idx = t0.unsqueeze(1) + torch.arange(W)
        win = z[s.unsqueeze(1), idx]
        rw = raw[s.unsqueeze(1), idx]
        if fixed:   # physical range check on the raw meter readings
            keep = (rw < 5000).all(1)
            win = win[keep]
        batches.append((win[:, :LOOKBACK], win[:, LOOKBACK:]))

    model = NBeats()
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.02,
                                    initial_accumulator_value=0.1, eps=1e-10)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches,
                steps=STEPS, amp_dtype=None, scaler=None)
