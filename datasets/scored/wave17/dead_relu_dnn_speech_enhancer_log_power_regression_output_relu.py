"""Regression DNN speech enhancer (Xu et al. 2014/2015): spliced context frames of normalised
noisy log-power spectra -> 3 hidden ReLU layers -> clean log-power spectrum of the centre frame,
MSE loss, Adam.

Mechanism: the MLP was built with a helper that appends nn.ReLU() after every Linear, including
the output layer. The targets are natural-log power spectra of clean speech, which are all
negative (roughly -12..-2). The output ReLU can only produce >= 0; the gradient pushes every
positive output down to 0, where the unit dies: once all outputs are clamped at 0 no gradient
reaches any weight and the loss sits at mean(target**2). ORIGIN is that final ReLU (net.7), the
activation that dies. Fix: no activation on the regression output (nn.Identity in its place).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.7"
SOURCE = "Xu, Du, Dai & Lee 2015 regression DNN speech enhancement; make_mlp helper adds ReLU after the output layer"

N_BIN, CTX = 33, 5


def _batch(g, n, noisy_mean, noisy_std):
    # clean log-power: spectral envelope (formant-like bumps) on a negative floor
    f = torch.arange(N_BIN).float()
    c1 = 4 + 10 * torch.rand(n, 1, generator=g)
    c2 = 15 + 12 * torch.rand(n, 1, generator=g)
    env = -9.0 + 5.0 * torch.exp(-0.5 * ((f - c1) / 2.5) ** 2) + 3.5 * torch.exp(-0.5 * ((f - c2) / 3.0) ** 2)
    env = env - 0.08 * f
    clean = env.unsqueeze(1) + 0.3 * torch.randn(n, CTX, N_BIN, generator=g)
    noise_db = -7.0 + 2.0 * torch.rand(n, 1, 1, generator=g)
    noisy = torch.logaddexp(clean, noise_db + 0.5 * torch.randn(n, CTX, N_BIN, generator=g))
    x = ((noisy - noisy_mean) / noisy_std).reshape(n, CTX * N_BIN)
    return x, clean[:, CTX // 2]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    h = [128, 96, 192][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [64, 32, 128][seed % 3]
    steps = 120
    net = [nn.Linear(CTX * N_BIN, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
           nn.Linear(h, h), nn.ReLU(), nn.Linear(h, N_BIN), nn.Identity() if fixed else nn.ReLU()]
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*net))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_batch(g, bs, -5.0, 2.0) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
