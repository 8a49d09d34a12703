"""Healthy: LoRA adaptation of a frozen, pre-trained hand-written GRU load forecaster to a
new feeder (rank-r adapters on the input->gates and hidden->gates projections, trainable
mean/variance head), heteroscedastic Gaussian NLL, RMSprop.

Why a naive monitor might complain, and why it is fine:
- the Gaussian NLL becomes negative within the first few dozen steps (the predicted
  variance drops well below 1 on standardised targets) and keeps decreasing;
- LoRA's B matrices start at exactly 0, so on the first step every A matrix receives an
  exactly-zero gradient (and RMSprop makes an exactly-zero update), and the first update of
  each B is infinitely large relative to its (zero) weight;
- almost all parameters are frozen (no gradient at all), and the trainable ones are a few
  percent of the model.

ORIGIN: None (healthy).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("LoRA (Hu et al. 2021, B initialised to zero) applied to a recurrent forecaster; "
          "DeepAR-style Gaussian likelihood heads whose NLL is negative once sigma < 1/sqrt(2 pi e)")


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t()) @ self.lora_B.t() * self.scaling


class GRUForecaster(nn.Module):
    def __init__(self, n_in, hid):
        super().__init__()
        self.x2g = nn.Linear(n_in, 3 * hid)
        self.h2g = nn.Linear(hid, 3 * hid)
        self.head = nn.Linear(hid, 2)
        self.hid = hid

    def forward(self, x):                          # x: (B, T, n_in)
        h = x.new_zeros(x.shape[0], self.hid)
        gx_all = self.x2g(x)
        H = self.hid
        for t in range(x.shape[1]):
            gx, gh = gx_all[:, t], self.h2g(h)
            r = torch.sigmoid(gx[:, :H] + gh[:, :H])
            z = torch.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
            n = torch.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
            h = (1 - z) * n + z * h
        out = self.head(h)
        return out[:, 0], F.softplus(out[:, 1]) + 1e-4


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(19000 + seed)
    W = 16
    hid = [48, 32, 64][seed % 3]
    r = [4, 2, 8][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [64, 96, 48][seed % 3]
    steps = 120

    def sample(n, feeder):
        t0 = torch.randint(0, 10000, (n, 1), generator=g).float()
        t = t0 + torch.arange(W + 1).float()
        day = torch.sin(2 * math.pi * t / 24)
        week = torch.sin(2 * math.pi * t / 168)
        if feeder == "src":
            s = 1.0 * day + 0.3 * week
        else:                                      # new feeder: evening peak, stronger weekly
            s = 0.6 * day + 0.5 * torch.sin(4 * math.pi * t / 24 + 1.0) + 0.6 * week
        s = s + 0.1 * torch.randn(n, W + 1, generator=g)
        feats = torch.stack([s[:, :W], torch.sin(2 * math.pi * t[:, :W] / 24),
                             torch.cos(2 * math.pi * t[:, :W] / 24)], -1)
        return feats, s[:, W]

    torch.manual_seed(seed)
    model = GRUForecaster(3, hid)
    nll = nn.GaussianNLLLoss()
    popt = torch.optim.Adam(model.parameters(), lr=5e-3)
    for _ in range(80):                            # pre-training on the source feeder
        x, y = sample(128, "src")
        popt.zero_grad()
        mu, var = model(x)
        nll(mu, y, var).backward()
        popt.step()

    for p in model.parameters():
        p.requires_grad_(False)
    model.x2g = LoRALinear(model.x2g, r, alpha=2 * r)
    model.h2g = LoRALinear(model.h2g, r, alpha=2 * r)
    for p in model.head.parameters():
        p.requires_grad_(True)

    batches = [sample(bs, "tgt") for _ in range(steps)]

    def loss_fn(out, y):
        mu, var = out
        return nll(mu, y, var)

    opt = torch.optim.RMSprop([p for p in model.parameters() if p.requires_grad], lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
