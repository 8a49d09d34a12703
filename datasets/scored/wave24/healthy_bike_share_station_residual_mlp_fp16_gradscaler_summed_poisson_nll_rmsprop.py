"""Hourly bike-share pickup forecaster per station (Citi Bike / Capital Bikeshare style): a
TiDE-style residual MLP over the flattened window reads the last 48 hours of a station's
log1p pickups, temperature, rain and hour-of-day (plus next-hour weather) and outputs the
log-rate of next-hour pickups; Poisson NLL with ``reduction='sum'`` over the batch (the
team's convention: loss = total negative log-likelihood of the batch's trips), RMSprop;
trained under float16 autocast with a correctly used GradScaler.

Why it is healthy but looks odd: the summed loss is large (hundreds), and the GradScaler
starts at scale 2^16, so for the first steps the scaled backward overflows in fp16, the
scaler finds inf gradients, SKIPS the optimizer step (parameters change by exactly zero)
and halves the scale until it settles. The first applied RMSprop step is ~10x lr per weight
(its square average starts at 0, alpha = 0.99), so the summed loss spikes from ~250 to
~1e4-1e5 for a few steps and then recovers; and since ``full=False`` drops the log(y!)
term, the summed Poisson NLL becomes negative (to ~-300..-500) as the rates fit. None of
this is a fault: no non-finite loss ever reaches the user, no step with inf gradients is
applied, and the model learns.

ORIGIN = None (healthy). Fix: nothing to fix; ``fixed`` builds the same run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Das et al. 2023 TiDE (residual MLP forecaster); bike-share demand forecasting "
          "with Poisson likelihood; PyTorch "
          "AMP docs: GradScaler skips steps with inf/NaN gradients and lowers the scale "
          "(initial scale 2**16), expected during the first iterations")


class ResBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = nn.ReLU()

    def forward(self, x):
        return x + self.act(self.fc(x))


class StationResMLP(nn.Module):
    """TiDE-style residual MLP over the flattened 48 h window (+ next-hour covariates)."""

    def __init__(self, d_in, width, levels):
        super().__init__()
        self.inp = nn.Linear(d_in, width)
        self.blocks = nn.Sequential(*[ResBlock(width) for _ in range(levels)])
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        return self.out(self.blocks(torch.relu(self.inp(x.flatten(1))))).squeeze(1)


def _stations(g, n, T=48):
    base = torch.exp(0.5 + 1.2 * torch.rand(n, 1, generator=g))           # station popularity
    hour0 = torch.randint(0, 24, (n, 1), generator=g).float()
    h = (hour0 + torch.arange(T + 1).float()) % 24
    profile = 1 + 1.2 * torch.exp(-0.5 * ((h - 8) / 1.3) ** 2) + 1.5 * torch.exp(-0.5 * ((h - 17.5) / 1.8) ** 2) \
        - 0.7 * torch.exp(-0.5 * ((h - 3) / 2.5) ** 2)
    temp = 15 + 8 * torch.randn(n, 1, generator=g) + 4 * torch.sin((h - 9) / 24 * 6.2832)
    rain = (torch.rand(n, T + 1, generator=g) < 0.1).float()
    rate = base * profile * torch.sigmoid((temp - 5) / 5) * (1 - 0.6 * rain)
    counts = torch.poisson(rate, generator=g)
    x = torch.stack([torch.log1p(counts[:, :T]) - 1.0, (temp[:, :T] - 15) / 8, rain[:, :T] * 2 - 0.2,
                     torch.sin(h[:, :T] / 24 * 6.2832), torch.cos(h[:, :T] / 24 * 6.2832)], 1)
    # next hour's weather and hour are known (forecast), put them in the last column
    x[:, 1:, -1] = torch.stack([(temp[:, T] - 15) / 8, rain[:, T] * 2 - 0.2,
                                torch.sin(h[:, T] / 24 * 6.2832), torch.cos(h[:, T] / 24 * 6.2832)], 1)
    return x, counts[:, T]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(15000 + seed)
    ch = [128, 96, 160][seed % 3]
    levels = [2, 3, 2][seed % 3]
    bs = [256, 192, 320][seed % 3]
    lr = [5e-4, 4e-4, 6e-4][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = StationResMLP(5 * 48, ch, levels)
    x, y = _stations(g, steps * bs)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    return dict(model=model, optimizer=opt,
                loss_fn=nn.PoissonNLLLoss(log_input=True, full=False, reduction="sum"),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=scaler)
