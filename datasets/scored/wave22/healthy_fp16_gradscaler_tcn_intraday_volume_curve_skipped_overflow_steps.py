"""Healthy hard negative: a temporal convolutional network (dilated causal Conv1d residual blocks,
Bai et al. 2018) forecasting the next-day intraday volume curve of a stock (share of daily
volume per 30-min bucket, the input to a VWAP execution schedule) from the past days' curves,
trained with float16 autocast and a GradScaler.

What looks alarming: under float16 the scaler starts at 2**16; the scaled backward overflows in
the fp16 activations' gradients during the first steps, so the scaler finds inf gradients, skips
those optimizer steps and halves its scale (2**16 -> 2**13); earnings-day rows put 3-5x the
usual share into the opening bucket. The forward runs in half precision. None of this is a
failure: GradScaler is doing its job, the loss stays finite and the forecast error drops well
below the first steps'.

ORIGIN: None (healthy).
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("torch.amp GradScaler skipping steps with inf/NaN gradients early in fp16 training "
          "(documented behaviour); TCN intraday volume-profile forecasting for VWAP execution")


class TCNBlock(nn.Module):
    def __init__(self, ch, dilation, k=3):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.conv1 = nn.Conv1d(ch, ch, k, dilation=dilation)
        self.conv2 = nn.Conv1d(ch, ch, k, dilation=dilation)
        self.act = nn.ReLU()

    def forward(self, x):
        h = self.act(self.conv1(nn.functional.pad(x, (self.pad, 0))))
        h = self.act(self.conv2(nn.functional.pad(h, (self.pad, 0))))
        return self.act(x + h)


class VolumeTCN(nn.Module):
    def __init__(self, n_buckets, ch, n_blocks):
        super().__init__()
        self.inp = nn.Conv1d(n_buckets + 1, ch, 1)
        self.blocks = nn.Sequential(*[TCNBlock(ch, 2 ** i) for i in range(n_blocks)])
        self.out = nn.Linear(ch, n_buckets)

    def forward(self, x):                           # x: (B, days, buckets + 1)
        h = self.blocks(self.inp(x.transpose(1, 2)))
        return torch.log_softmax(self.out(h[:, :, -1]), dim=-1)   # log volume shares


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n_buckets = 13
    ch = [24, 16, 24][seed % 3]
    n_blocks = [3, 4, 3][seed % 3]
    days = [16, 20, 12][seed % 3]
    batch = [32, 24, 48][seed % 3]
    lr = [2e-3, 1.5e-3, 2.5e-3][seed % 3]
    steps = 120
    u = np.linspace(0, 1, n_buckets)
    base = 1.0 + 2.5 * (u - 0.5) ** 2 + 1.2 * (u > 0.95)          # U-shape + closing auction

    def sample(b):
        stock = rng.normal(0, 0.3, size=(b, 1, n_buckets))
        ar = np.zeros((b, days + 1, n_buckets))
        for t in range(1, days + 1):
            ar[:, t] = 0.7 * ar[:, t - 1] + 0.15 * rng.normal(size=(b, n_buckets))
        logits = np.log(base)[None, None] + stock + ar
        earn = rng.random((b, days + 1)) < 0.03
        logits[:, :, 0] += 1.5 * earn                                # earnings-day open surge
        share = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
        x = np.concatenate([share[:, :-1] * n_buckets, earn[:, 1:, None].astype(float)], -1)
        return torch.tensor(x, dtype=torch.float32), torch.tensor(share[:, -1], dtype=torch.float32)

    batches = [sample(batch) for _ in range(steps)]
    model = VolumeTCN(n_buckets, ch, n_blocks)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)

    def loss_fn(log_share, share):                     # KL(true || predicted) x 100
        return 100.0 * (share * (torch.log(share) - log_share.float())).sum(-1).mean()

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn, "batches": batches,
            "steps": steps, "amp_dtype": torch.float16, "scaler": scaler}
