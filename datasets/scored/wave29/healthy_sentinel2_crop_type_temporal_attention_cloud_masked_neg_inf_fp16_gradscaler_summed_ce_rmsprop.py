"""Healthy: Sentinel-2 pixel time-series crop-type classifier (lightweight temporal attention
encoder) with cloudy acquisitions masked to -inf in the attention scores, trained under fp16
autocast with a GradScaler, summed cross-entropy and RMSprop.

What a naive monitor would flag:
* the attention scores of cloudy dates are set to ``-inf`` before the softmax -- every batch
  contains -inf tensors, but each pixel keeps at least four clear dates, so the softmax rows
  are well defined and no -inf ever reaches the loss;
* the loss uses ``reduction="sum"`` over the batch, so its value is in the hundreds;
* the GradScaler starts at 65536: with a summed loss the first scaled backward passes overflow
  fp16, the scaler skips those optimizer steps (parameters change by exactly zero) and halves
  its scale until the gradients fit -- a few "frozen" steps with inf gradients at the start.
RMSprop is invariant to the loss scale, so the summed loss does not change the step size.

Mechanism: none -- dates are embedded with a linear layer plus a day-of-year sinusoidal
encoding, one masked self-attention block, then attention pooling with a learned master query
(L-TAE style) and an MLP classifier.

ORIGIN: None (healthy).

Fix: nothing to fix; ``fixed`` has no effect.
"""
import math

import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Garnot & Landrieu 2020 'Lightweight Temporal Self-Attention for Classifying Satellite "
          "Image Time Series' (L-TAE) with cloud masks; PyTorch AMP GradScaler docs (skipped steps "
          "while the scale calibrates); masked_fill(-inf) key padding in attention.")

T, BANDS = 24, 10


def doy_encoding(doy, d):
    i = torch.arange(d // 2).float()
    freq = 1.0 / (1000 ** (2 * i / d))
    ang = doy[..., None] * freq
    return torch.cat([ang.sin(), ang.cos()], dim=-1)


class CropTAE(nn.Module):
    def __init__(self, d, n_cls, heads):
        super().__init__()
        self.d, self.heads = d, heads
        self.embed = nn.Linear(BANDS, d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.key = nn.Linear(d, d)
        self.master_query = nn.Parameter(torch.randn(d) * 0.1)
        self.classifier = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, n_cls))

    def forward(self, x, doy, cloudy):
        b = x.shape[0]
        h = self.embed(x) + doy_encoding(doy, self.d).to(x.dtype)
        q, k, v = self.qkv(h).view(b, T, 3, self.heads, self.d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d // self.heads)
        scores = scores.masked_fill(cloudy[:, None, None, :], float("-inf"))
        att = torch.softmax(scores, dim=-1)
        h = self.norm1(h + self.proj((att @ v).transpose(1, 2).reshape(b, T, self.d)))
        pool_scores = (self.key(h) @ self.master_query) / math.sqrt(self.d)
        pool_scores = pool_scores.masked_fill(cloudy, float("-inf"))
        w = torch.softmax(pool_scores, dim=-1)
        return self.classifier((w[..., None] * h).sum(1))


def _pixels(n, n_cls, g):
    doy = torch.sort(torch.randint(1, 365, (n, T), generator=g).float(), dim=1).values
    # per-class NDVI phenology: peak date and width
    peak = torch.linspace(120, 250, n_cls)[torch.randperm(n_cls, generator=g)]
    width = 25 + 30 * torch.rand(n_cls, generator=g)
    y = torch.randint(0, n_cls, (n,), generator=g)
    shift = 10 * torch.randn(n, 1, generator=g)
    green = torch.exp(-((doy - peak[y][:, None] - shift) / width[y][:, None]) ** 2)
    soil = torch.tensor([0.08, 0.10, 0.13, 0.16, 0.18, 0.2, 0.22, 0.25, 0.28, 0.3])
    veg = torch.tensor([0.04, 0.07, 0.04, 0.12, 0.3, 0.38, 0.42, 0.45, 0.25, 0.15])
    x = soil + green[..., None] * (veg - soil) + 0.01 * torch.randn(n, T, BANDS, generator=g)
    cloudy = torch.rand(n, T, generator=g) < 0.35
    keep = torch.argsort(torch.rand(n, T, generator=g), dim=1)[:, :4]   # >= 4 clear dates per pixel
    cloudy.scatter_(1, keep, False)
    x = torch.where(cloudy[..., None], torch.full_like(x, 0.6) + 0.1 * torch.rand(n, T, 1, generator=g), x)
    x = (x - 0.2) / 0.12
    return (x, doy, cloudy), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(211 + seed)
    torch.manual_seed(seed)
    d = [32, 48, 64][seed % 3]
    heads = [4, 4, 8][seed % 3]
    batch = [64, 48, 32][seed % 3]
    lr = [1e-3, 7e-4, 1.5e-3][seed % 3]
    n_cls, steps = 8, 160
    (x, doy, cloudy), y = _pixels(steps * batch, n_cls, g)
    model = CropTAE(d, n_cls, heads)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    batches = [((x[i * batch:(i + 1) * batch], doy[i * batch:(i + 1) * batch],
                 cloudy[i * batch:(i + 1) * batch]), y[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(reduction="sum"),
            "batches": batches, "steps": steps, "amp_dtype": torch.float16,
            "scaler": torch.amp.GradScaler("cpu")}
