"""fp16_overflow: the exp link of a GRU count forecaster overflows float16 on the busiest series.

Mechanism: a web-traffic forecaster predicts the next hour's page views of many pages from the past
hours. Inputs are properly scaled (log1p of the counts, standardised); a GRU reads the window and a
linear head gives the log-rate eta; a log-link module returns the Poisson rate ``exp(eta)``,
trained with the Poisson NLL (full, so the loss is positive) under ``torch.autocast(float16)`` with
a GradScaler. On the CPU autocast leaves the GRU in float32, but the head is a Linear, so eta is
float16 and ``torch.exp`` of a float16 tensor is float16: the rate holds at most 65504. Page levels
are log-normal: most pages get a few thousand to tens of thousands of views an hour, and the
busiest pages of some batches more than 65504. The head's bias starts at the log of the mean count,
so the first predictions are in range; as the model learns to follow each page's level, its eta for
the busiest pages passes log(65504) = 11.09, that rate is inf, the loss is inf / NaN. Which step
that is depends on the seed's learning rate, levels and batches. eta itself stays finite (about
11-12), and the GradScaler cannot help: it scales gradients, not forward activations.

ORIGIN: ``link``, the log-link module whose float16 exp overflows first (the head before it is
finite).
Fixed: the same run with the link's exp computed in float32 (autocast disabled and eta upcast),
the "fp32 for the op" fix; the model's function is unchanged.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "link"
SOURCE = (
    "Poisson/log-link count models (e.g. Kaggle's Web Traffic Time Series Forecasting, page "
    "views up to millions an hour) under float16 mixed precision: exp of a float16 log-rate "
    "passes 65504 once log-rate > 11.09; PyTorch's CUDA autocast runs exp and the Poisson NLL "
    "in float32 for this reason (AMP op reference); CPU autocast and .half() models do not."
)


class ExpLink(nn.Module):
    """rate = exp(eta); ``fp32`` computes it in float32."""

    def __init__(self, fp32: bool) -> None:
        super().__init__()
        self.fp32 = fp32

    def forward(self, eta: torch.Tensor) -> torch.Tensor:
        if self.fp32:
            with torch.autocast(device_type="cpu", enabled=False):
                return torch.exp(eta.float())
        return torch.exp(eta)  # float16 under autocast: inf past 65504


class Forecaster(nn.Module):
    def __init__(self, hidden: int, layers: int, fp32_link: bool) -> None:
        super().__init__()
        self.gru = nn.GRU(1, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        self.link = ExpLink(fp32_link)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.link(self.head(out[:, -1]))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    hidden = rng.choice([12, 16, 24])
    layers = rng.choice([1, 2])
    window = rng.choice([8, 12, 16])
    batch = rng.choice([32, 48])
    steps = rng.choice([100, 120, 150])
    lr = rng.choice([3e-3, 5e-3, 1e-2])
    median = rng.choice([1e4, 1.5e4, 2e4])  # page views per hour of the median page
    spread = rng.choice([0.7, 0.9])  # log-normal sigma of the page levels

    g = torch.Generator().manual_seed(280_000 + seed)
    n = steps * batch
    level = median * torch.exp(spread * torch.randn(n, 1, generator=g))
    t0 = 24 * torch.rand(n, 1, generator=g)
    hours = t0 + torch.arange(window + 1)
    daily = 1.0 + 0.4 * torch.sin(2 * math.pi * hours / 24)
    noise = torch.exp(0.1 * torch.randn(n, window + 1, generator=g))  # overdispersion
    counts = torch.poisson(level * daily * noise, generator=g)
    logc = torch.log1p(counts[:, :window])
    mu, sd = logc.mean(), logc.std()
    x = ((logc - mu) / sd).unsqueeze(-1)
    y = counts[:, window:]
    batches = [
        (x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch]) for i in range(steps)
    ]

    torch.manual_seed(seed)
    model = Forecaster(hidden, layers, fp32_link=fixed)
    with torch.no_grad():
        model.head.bias.fill_(math.log(float(y.mean())))  # start at the mean count
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.PoissonNLLLoss(log_input=False, full=True),
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.float16,
        "scaler": scaler,
    }
