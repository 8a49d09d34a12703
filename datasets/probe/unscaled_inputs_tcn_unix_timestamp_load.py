"""Dilated causal TCN forecasting next-hour electricity load from a 48-hour window of
[unix timestamp in seconds (~1.7e9), outdoor temperature in C, metered load in kW], trained with
SGD+momentum on the raw kW target. The timestamp channel is nine orders of magnitude above the
others, so the first conv outputs ~4e8 (max ~1e9), the step-0 loss is ~1e14-1e17 and the SGD update
overflows the weights to inf/NaN at once. fixed=True standardises every input channel
and the target with training-set mean/std (same windows, model, init and optimizer).
"""
import math

import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("load-forecasting tutorials/Q&A where a datetime column is fed as epoch seconds "
          "(df.timestamp.astype('int64')//10**9) next to raw kW and the loss goes NaN; fix with "
          "StandardScaler on inputs and target. TCN of Bai, Kolter & Koltun 2018 (locuslab/TCN)")

L, C_IN, CH = 48, 3, 32


class CausalBlock(nn.Module):
    def __init__(self, c_in, c_out, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv1 = nn.Conv1d(c_in, c_out, 3, dilation=dilation)
        self.conv2 = nn.Conv1d(c_out, c_out, 3, dilation=dilation)
        self.relu = nn.ReLU()
        self.down = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x):
        h = self.relu(self.conv1(nn.functional.pad(x, (self.pad, 0))))
        h = self.relu(self.conv2(nn.functional.pad(h, (self.pad, 0))))
        return self.relu(h + self.down(x))


class TCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(*[CausalBlock(C_IN if i == 0 else CH, CH, 2 ** i) for i in range(4)])
        self.head = nn.Linear(CH, 1)

    def forward(self, x):                      # x: (B, L, C_IN)
        h = self.blocks(x.transpose(1, 2))     # (B, CH, L)
        return self.head(h[:, :, -1]).squeeze(-1)


def _windows(g, bs):
    t0 = 1.64e9 + torch.rand(bs, 1, generator=g) * 9e7          # 2022-2024, epoch seconds
    t0 = (t0 / 3600).floor() * 3600
    t = t0 + 3600.0 * torch.arange(L + 1)[None]                   # hourly
    hour = (t / 3600) % 24
    day = (t / 86400) % 7
    temp = 12 + 9 * torch.sin(2 * math.pi * (t / 86400 - 100) / 365) + 4 * torch.sin(2 * math.pi * (hour - 9) / 24)
    temp = temp + torch.randn(bs, L + 1, generator=g)
    base = 400 + 900 * torch.rand(bs, 1, generator=g)             # kW, per site
    load = base * (1 + 0.3 * torch.sin(2 * math.pi * (hour - 7) / 24) + 0.08 * torch.cos(2 * math.pi * day / 7))
    load = load + 6 * (temp - 18).abs() + 15 * torch.randn(bs, L + 1, generator=g)
    x = torch.stack([t[:, :L], temp[:, :L], load[:, :L]], -1)
    return x, load[:, L]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 150, 64
    data = [_windows(g, bs) for _ in range(steps)]
    if fixed:
        xs = torch.cat([x for x, _ in data]).reshape(-1, C_IN)
        ys = torch.cat([y for _, y in data])
        xm, xsd = xs.mean(0), xs.std(0)
        ym, ysd = ys.mean(), ys.std()
        data = [((x - xm) / xsd, (y - ym) / ysd) for x, y in data]
    batches = [(x.float(), y.float()) for x, y in data]
    model = TCN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
