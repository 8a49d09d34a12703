"""A two-layer minGRU forecaster (Feng et al. 2024 'Were RNNs All We Needed?': z_t = sigmoid(W_z x_t),
h_t = (1 - z_t) h_{t-1} + z_t W_h x_t) predicts the next reading of irregular multichannel sensor
series, trained with NAdam. The data come as a dense array in which both the padding after each
series' end and the sensor drop-outs inside it are NaN - the batches really do contain NaN. The
pipeline handles them the standard way: inputs are zero-filled with torch.where and a "missing"
indicator channel is appended (as in GRU-D), NaN targets are replaced by 0 with nan_to_num BEFORE the
squared error, and the error is masked and averaged over the observed target positions only (so no
0 * NaN or NaN-gradient-through-where trap). Losses and gradients stay finite and the model trains
normally despite NaN-laden inputs and targets."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Che et al. 2018 'Recurrent Neural Networks for Multivariate Time Series with Missing Values' "
          "(GRU-D masking/indicators) + Feng et al. 2024 minGRU")

C, H, T_MAX = 3, 32, 40


class MinGRU(nn.Module):
    def __init__(self, d_in, h):
        super().__init__()
        self.z = nn.Linear(d_in, h)
        self.h = nn.Linear(d_in, h)

    def forward(self, x):
        z = torch.sigmoid(self.z(x))
        cand = self.h(x)
        h = torch.zeros(x.shape[0], cand.shape[-1])
        out = []
        for t in range(x.shape[1]):
            h = (1 - z[:, t]) * h + z[:, t] * cand[:, t]
            out.append(h)
        return torch.stack(out, 1)


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(2 * C, H)
        self.rnn1 = MinGRU(H, H)
        self.rnn2 = MinGRU(H, H)
        self.head = nn.Linear(H, C)

    def forward(self, x, length_mask):
        missing = torch.isnan(x)
        x0 = torch.where(missing, torch.zeros_like(x), x)          # zero-fill ...
        feats = torch.cat([x0, missing.float()], -1)               # ... plus missing indicators
        h = torch.relu(self.inp(feats))
        h = self.rnn2(self.rnn1(h) + h)
        return self.head(h) * length_mask.unsqueeze(-1)


def loss_fn(pred, y):
    observed = ~torch.isnan(y)
    y0 = torch.nan_to_num(y, nan=0.0)                               # sanitise before the arithmetic
    se = (pred - y0) ** 2 * observed
    return se.sum() / observed.sum()


def make_batch(g, bs):
    lengths = torch.randint(15, T_MAX + 2, (bs,), generator=g)
    t = torch.arange(T_MAX + 1, dtype=torch.float32)
    phase = torch.rand(bs, 1, generator=g) * 6.28
    base = torch.sin(t * 0.3 + phase)
    s = torch.stack([base, 0.5 * base.roll(3, 1) + 0.3 * torch.cos(t * 0.7 + phase), base ** 2 - 0.5], -1)
    s = s + 0.05 * torch.randn(bs, T_MAX + 1, C, generator=g)
    dropout = torch.rand(bs, T_MAX + 1, C, generator=g) < 0.1       # sensor drop-outs
    s = s.masked_fill(dropout, float("nan"))
    beyond = torch.arange(T_MAX + 1).unsqueeze(0) >= lengths.unsqueeze(1)
    s = s.masked_fill(beyond.unsqueeze(-1), float("nan"))           # NaN padding
    x, y = s[:, :-1], s[:, 1:]
    length_mask = ~beyond[:, 1:]
    return (x, length_mask.float()), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Forecaster()
    opt = torch.optim.NAdam(model.parameters(), lr=3e-3)
    steps = 150
    batches = [make_batch(g, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
