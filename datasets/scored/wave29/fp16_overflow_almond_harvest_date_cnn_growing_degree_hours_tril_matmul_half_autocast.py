"""Almond harvest-date model whose season-long growing-degree-hour accumulation is written as a
lower-triangular matmul; under fp16 autocast the running total passes 65504 and becomes inf.

Mechanism: an orchard-phenology model predicts the harvest date (standardised anomaly) of an
orchard-year from daily weather (Jan-Oct).  Daily growing degree hours (Anderson et al. GDH,
base 4.5 C, optimum 25 C: 0-500 degree-hours per day) are accumulated inside the model and the
running total (in 1e4 degree-hours) is stacked with the standardised daily weather channels
and fed to a 1-D CNN.  To keep everything "vectorised and export-friendly" the accumulation is
``gdh @ tril(ones(D, D)).T`` in a small module.  Training uses fp16 autocast with a GradScaler.
Autocast runs that matmul in half precision; most orchard-years accumulate 60-130 thousand
degree-hours by late summer, above fp16's maximum of 65504, so the running total
becomes +inf, the scaled channel is inf, the conv outputs are inf - inf = NaN and the loss is
NaN from the first batch containing a warm site.  In fp32 the same totals are harmless.  The
GradScaler cannot help: the overflow is in the forward pass.

ORIGIN: ``accum`` -- the accumulation matmul is the op whose half-precision output passes 65504.

Fix: run the accumulation in fp32 (autocast disabled for that module, input cast to float);
everything else, including fp16 autocast for the CNN and the GradScaler, is unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "accum"
SOURCE = ("Anderson, Richardson & Kesner 1986 growing-degree-hour model; almond/peach harvest-date "
          "models using season GDH (e.g. Lightner/UC Davis GDH30); fp16 autocast casting matmul to "
          "half so large running sums overflow (PyTorch AMP docs on ops that autocast to float16).")

DAYS = 300


class SeasonAccumulator(nn.Module):
    def __init__(self, days, fp32):
        super().__init__()
        self.register_buffer("tril", torch.tril(torch.ones(days, days)))
        self.fp32 = fp32

    def forward(self, gdh):  # (B, D) degree-hours per day -> (B, D) running total
        if self.fp32:
            with torch.autocast(device_type=gdh.device.type, enabled=False):
                return gdh.float() @ self.tril.T
        return gdh @ self.tril.T


class HarvestCNN(nn.Module):
    def __init__(self, fin, width, depth, fp32_accum):
        super().__init__()
        self.accum = SeasonAccumulator(DAYS, fp32_accum)
        layers, c = [], fin + 1
        for i in range(depth):
            layers += [nn.Conv1d(c, width, 7, padding=3, stride=2), nn.ReLU()]
            c = width
        self.temporal = nn.Sequential(*layers)
        self.head = nn.Linear(width, 1)

    def forward(self, weather, gdh):
        cum = self.accum(gdh) / 1e4
        h = torch.cat([weather, cum[:, None, :].to(weather.dtype)], dim=1)
        return self.head(self.temporal(h).mean(-1)).squeeze(-1)


def _orchards(n, g):
    d = torch.arange(DAYS).float()
    tmean = 14 + 2.5 * torch.randn(n, 1, generator=g)            # site climate (Central Valley to cooler)
    amp = 9 + 1.5 * torch.randn(n, 1, generator=g)
    tday = tmean - amp * torch.cos(2 * torch.pi * (d[None] - 15) / 365) + 3 * torch.randn(n, DAYS, generator=g)
    gdh = 24 * (tday - 4.5).clamp(0, 20.5)
    rh = torch.randn(n, DAYS, generator=g)
    rad = torch.sin(torch.pi * d / 365)[None] + 0.3 * torch.randn(n, DAYS, generator=g)
    weather = torch.stack([(tday - 14) / 10, rh, rad], dim=1)
    cum = gdh.cumsum(1)
    bloom = 50 + ((cum < 3000).sum(1).float() - 50) * 0.5
    gdh30 = cum[:, 110] - cum[:, 80]
    harvest = bloom + 160 - 0.012 * gdh30 - 0.0004 * cum[:, 230] + 2 * torch.randn(n, generator=g)
    y = (harvest - harvest.mean()) / harvest.std()
    return weather, gdh, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(131 + seed)
    torch.manual_seed(seed)
    width = [32, 24, 48][seed % 3]
    depth = [3, 4, 3][seed % 3]
    batch = [16, 24, 12][seed % 3]
    lr = [0.03, 0.05, 0.02][seed % 3]
    steps = 120
    weather, gdh, y = _orchards(steps * batch, g)
    model = HarvestCNN(3, width, depth, fp32_accum=fixed)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    batches = [((weather[i * batch:(i + 1) * batch], gdh[i * batch:(i + 1) * batch]),
                y[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.SmoothL1Loss(), "batches": batches,
            "steps": steps, "amp_dtype": torch.float16, "scaler": torch.amp.GradScaler("cpu")}
