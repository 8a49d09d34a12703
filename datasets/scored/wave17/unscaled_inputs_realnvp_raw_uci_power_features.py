"""RealNVP (affine couplings, s/t MLPs, exp(s) scaling) for density estimation on raw household
power readings (UCI POWER-like: active power in W, voltage in V, sub-metering in Wh, ...), Adam.

Mechanism: the features are fed in raw units (values ~1e0..1e3) instead of being standardised as
in the MAF/RealNVP preprocessing. The first coupling's s-network receives these raw values, its
first Linear produces pre-activations of hundreds, the unbounded log-scale s reaches >100 and
exp(s) overflows to inf (loss inf / NaN from the first batches). ORIGIN: the first Linear of the
first coupling's s-net, the first layer that receives the unscaled inputs.
Fix: standardise the features (per-feature mean/std from the training data).
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "couplings.0.s_net.0"
SOURCE = "RealNVP/MAF on UCI POWER/GAS without the standard per-feature normalisation; exp(s) overflow and NaN NLL"


class AffineCoupling(nn.Module):
    def __init__(self, d, hidden, mask):
        super().__init__()
        self.register_buffer("mask", mask)
        self.s_net = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, d))
        self.t_net = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, d))

    def forward(self, x):
        xm = x * self.mask
        s = self.s_net(xm) * (1 - self.mask)
        t = self.t_net(xm) * (1 - self.mask)
        y = xm + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.sum(1)


class RealNVP(nn.Module):
    def __init__(self, d, hidden, n):
        super().__init__()
        masks = [(torch.arange(d) % 2 == (i % 2)).float() for i in range(n)]
        self.couplings = nn.ModuleList([AffineCoupling(d, hidden, m) for m in masks])

    def forward(self, x):
        ld = 0
        for c in self.couplings:
            x, l = c(x)
            ld = ld + l
        return -0.5 * (x ** 2).sum(1) - 0.5 * x.shape[1] * math.log(2 * math.pi) + ld


def _power(g, n):
    hour = torch.rand(n, 1, generator=g) * 24
    load = 1.0 + 0.8 * torch.sin(hour / 24 * 2 * math.pi) + 0.3 * torch.randn(n, 1, generator=g)
    active_w = 1000 * load.abs() + 50 * torch.randn(n, 1, generator=g)
    reactive_w = 0.12 * active_w + 20 * torch.randn(n, 1, generator=g)
    voltage = 240 - 2 * load + 1.5 * torch.randn(n, 1, generator=g)
    current = active_w / voltage
    sub1 = (torch.rand(n, 1, generator=g) < 0.3).float() * 30 * torch.rand(n, 1, generator=g)
    sub2 = 15 * load.abs() + 2 * torch.randn(n, 1, generator=g)
    return torch.cat([active_w, reactive_w, voltage, current, sub1, sub2], 1)


def build(seed, fixed=False):
    cfg = [dict(h=64, n=4, lr=1e-3, bs=128), dict(h=128, n=6, lr=5e-4, bs=64), dict(h=48, n=4, lr=2e-3, bs=256)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RealNVP(6, cfg["h"], cfg["n"])
    steps = 150
    raw = [_power(g, cfg["bs"]) for _ in range(steps)]
    if fixed:
        ref = _power(torch.Generator().manual_seed(1000 + seed), 4096)
        mu, sd = ref.mean(0), ref.std(0)
        raw = [(x - mu) / sd for x in raw]
    batches = [(x, None) for x in raw]
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loss_fn = lambda log_px, _: -log_px.mean()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
