"""unscaled_inputs: an LSTM load forecaster over packed variable-length sequences, fed raw
sensor units (kelvin, %, watts) and regressing the next-hour load in raw watts.

Model and data
    Hourly building telemetry: outdoor temperature in kelvin (~280-296), relative humidity
    in % (~40-75) and electrical load in watts (~1000-7000); sequences of 8-40 hours,
    right-padded and packed with ``pack_padded_sequence(enforce_sorted=False)`` inside the
    model; the target is the load one hour after the last observed step (mean ~4000 W,
    std 1100-1500 W). Model: Linear(3 -> H) -> LSTM(H) -> last hidden state -> Linear(H -> 1).
    Adam lr 3e-3, MSE, 200 steps of 32 sequences. Inputs are the tuple (padded, lengths).

Mechanism (measured, seeds 0/1/2)
    1. Nothing is standardised, so the input projection's pre-activations have a median
       magnitude of 680 / 495 / 374 and the LSTM gates (sigmoid/tanh) are pinned at 0/1 from
       step 0; the hidden state barely depends on the input.
    2. The target is ~4000 W while the head can only output |w| * sqrt(H) ~ a few units: the
       MSE is 1.6e7-1.9e7 at step 0, i.e. the variance plus the squared mean of the raw target.
    3. Adam moves each weight by at most ~lr per step, so after 200 steps the head weights
       are still < 0.78 and the mean prediction is 7-10 W: the loss stays at 1.5e7-1.9e7
       (mean of the last 10% / min of the first 5 = 1.08-1.17) -> stall.
    With standardised features and target (fixed) the same model reaches an MSE of
    0.014-0.020 in target-std units (r ~ 0.03).

ORIGIN
    None: the fault is the data preprocessing (missing feature/target scaling), not a module.

fixed=True
    Only the preprocessing changes: features standardised with the mean/std over the valid
    (unpadded) time steps, padding kept at 0, and the target z-scored; model, optimiser, lr
    and batch order are identical.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("unnormalised features/targets in sequence regression: keras-team/keras#4563 (LSTM "
          "multi-series regression with very large targets, loss huge/NaN; answer: rescale), "
          "sktime/pytorch-forecasting#1 ('timeseries should be normalized'), "
          "Shubble-LLC/shubble#353 (scaling LSTM inputs fixed training)")


class Forecaster(nn.Module):
    def __init__(self, n_feat, hidden):
        super().__init__()
        self.proj = nn.Linear(n_feat, hidden)
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(self.proj(x), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.head(h[-1]).squeeze(-1)


def _series(g, n, max_len):
    lengths = torch.randint(max_len // 3, max_len + 1, (n,), generator=g)
    hour0 = torch.randint(0, 24, (n, 1), generator=g).float()
    hours = hour0 + torch.arange(max_len + 1).float()[None]
    temp_k = 288 + 8 * torch.sin(2 * math.pi * (hours - 15) / 24) + 4 * torch.randn(n, 1, generator=g)
    humid = 55 + 20 * torch.rand(n, 1, generator=g) - 0.8 * (temp_k - 288)
    base = 3000 + 2000 * torch.rand(n, 1, generator=g)
    power = base + 1500 * torch.sin(2 * math.pi * (hours - 8) / 24) + 90 * (temp_k - 288)
    power = power + 100 * torch.randn(n, max_len + 1, generator=g)
    feats = torch.stack([temp_k, humid, power], -1)  # (n, max_len+1, 3): kelvin, %, watts
    idx = torch.arange(max_len)[None]
    x = feats[:, :max_len].clone()
    x[idx >= lengths[:, None]] = 0.0  # right padding
    y = power.gather(1, lengths[:, None]).squeeze(1)  # next-hour load after the last observed step
    return x, lengths, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(5000 + seed)
    bs, steps, max_len = 32, 200, [24, 32, 40][seed % 3]
    N = bs * steps
    x, lengths, y = _series(g, N, max_len)
    if fixed:
        valid = torch.arange(max_len)[None] < lengths[:, None]
        mu = x[valid].mean(0)
        sd = x[valid].std(0)
        x = torch.where(valid[..., None], (x - mu) / sd, torch.zeros(()))
        y = (y - y.mean()) / y.std()
    batches = [((x[i*bs:(i+1)*bs], lengths[i*bs:(i+1)*bs]), y[i*bs:(i+1)*bs]) for i in range(steps)]
    torch.manual_seed(seed)
    model = Forecaster(3, [32, 48, 40][seed % 3])
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
