"""Online soft sensor: an MLP predicts a lab-measured quality variable of a process from a live
stream of plant sensor channels (one stream batch per step).  As in streaming-ML libraries, the
inputs are standardised inside the model by a streaming scaler whose mean and variance are
updated from every training batch (Welford/Chan running moments over the whole stream so far),
and the model is optimised online with Adagrad.

Mechanism: a few steps into the stream one batch carries a burst of glitch rows from a data
logger: every channel reads 65535 (the uint16 full-scale / "no data" code) in engineering units,
~1e4 standard deviations away from normal.  The streaming scaler absorbs them: its running
variance grows by ~1e6-1e8x and, being a cumulative estimate, only decays like 1/n afterwards.
From then on every normal row is standardised to nearly the same value (divided by a std that is
hundreds of times too large), so the MLP sees an almost constant input and can only predict the
mean target: the loss returns to its starting level and stays there (a stall, no non-finite
value).  The glitch step varies with the seed.

ORIGIN = "scaler": the streaming standardiser is the first module the corrupt rows reach and the
one whose state they corrupt; the layers after it are healthy but starved of signal.

Fix: range-check the stream before the update (rows with a reading outside the sensors'
physical range are dropped from the batch), so the scaler never sees the glitch rows.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "scaler"
SOURCE = ("Data-logger 'no data' / full-scale codes (65535) in industrial sensor streams reaching a "
          "streaming StandardScaler (running mean/variance as in river.preprocessing.StandardScaler "
          "or a cumulative-average normaliser) that then squashes all later inputs.")


class StreamingStandardizer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))
        self.register_buffer("mean", torch.zeros(d))
        self.register_buffer("m2", torch.zeros(d))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                nb = x.shape[0]
                bm = x.mean(0)
                bm2 = ((x - bm) ** 2).sum(0)
                n = self.count
                tot = n + nb
                delta = bm - self.mean
                self.mean += delta * nb / tot
                self.m2 += bm2 + delta ** 2 * n * nb / tot
                self.count.fill_(float(tot))
        std = (self.m2 / (self.count - 1).clamp_min(1.0)).sqrt().clamp_min(1e-6)
        return (x - self.mean) / std


class SoftSensor(nn.Module):
    def __init__(self, d, hidden, depth):
        super().__init__()
        self.scaler = StreamingStandardizer(d)
        layers = []
        h = d
        for _ in range(depth):
            layers += [nn.Linear(h, hidden), nn.ReLU()]
            h = hidden
        layers.append(nn.Linear(h, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(self.scaler(x)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    d = pick(1, [12, 16, 20])
    hidden = pick(2, [64, 96, 128])
    depth = pick(3, [2, 3, 2])
    lr = pick(4, [0.03, 0.02, 0.04])
    batch = pick(5, [32, 48, 24])
    bad_step = pick(6, [2, 3, 4])
    steps = 150

    model = SoftSensor(d, hidden, depth)

    unit_mean = 50 + 100 * torch.rand(d, generator=g)  # e.g. temperatures, pressures, flows
    unit_std = 1 + 4 * torch.rand(d, generator=g)
    w = torch.randn(d, generator=g) / d ** 0.5
    w2 = torch.randn(d, generator=g) / d ** 0.5

    def rows(n):
        z = torch.randn(n, d, generator=g)
        y = z @ w + 0.5 * torch.tanh(2 * (z @ w2)) + 0.1 * torch.randn(n, generator=g)
        return unit_mean + unit_std * z, y

    lo, hi = unit_mean - 20 * unit_std, unit_mean + 20 * unit_std  # physical range check
    batches = []
    for s in range(steps):
        x, y = rows(batch)
        if s == bad_step:
            n_bad = max(2, batch // 6)
            x[:n_bad] = 65535.0
        if fixed:
            ok = ((x > lo) & (x < hi)).all(1)
            x, y = x[ok], y[ok]
        batches.append((x, y))

    optimizer = torch.optim.Adagrad(model.parameters(), lr=lr)
    return {"model": model, "optimizer": optimizer,
            "loss_fn": lambda out, y: F.smooth_l1_loss(out, y),
            "batches": batches, "steps": steps}
