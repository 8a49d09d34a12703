"""Neural option pricer (Culkin & Das 2017 style): an MLP maps (moneyness S/K, time to
maturity, rate, dividend yield, volatility) to the normalised call price C/K and is fit with
MSE to Black-Scholes prices.  To "guarantee" non-negative prices the user put an nn.ReLU on the
output (out_act) instead of softplus/exp.

Mechanism: most of the training grid is out of the money, so the targets are mostly ~0.  Adam
with lr of 1e-2..5e-2 quickly pushes the single output unit's pre-activation below zero for every
input (prices >= 0 are reached by overshooting to negative pre-activations).  The output ReLU
is then dead on the whole input distribution: its gradient is exactly zero, nothing upstream
receives gradient, and the MSE stays at the mean squared target for the rest of training.

ORIGIN: out_act, the output ReLU that dies.
Fix: LeakyReLU(0.01) for the output activation (still ~non-negative, but never gradient-dead).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = "Culkin & Das 2017 'Machine learning in finance: the case of deep learning for option pricing'; dead ReLU output unit used for positivity"


def bs_call(m, tau, r, q, sig):
    n = torch.distributions.Normal(0.0, 1.0)
    d1 = (torch.log(m) + (r - q + 0.5 * sig ** 2) * tau) / (sig * tau.sqrt())
    d2 = d1 - sig * tau.sqrt()
    return m * torch.exp(-q * tau) * n.cdf(d1) - torch.exp(-r * tau) * n.cdf(d2)


class Pricer(nn.Module):
    def __init__(self, width, depth, leaky):
        super().__init__()
        layers, d = [], 5
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.LeakyReLU(0.01)]
            d = width
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(d, 1)
        self.out_act = nn.LeakyReLU(0.01) if leaky else nn.ReLU()

    def forward(self, x):
        return self.out_act(self.out(self.body(x))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=64, depth=3, bs=128, lr=4e-2), dict(w=100, depth=4, bs=64, lr=1e-2), dict(w=64, depth=3, bs=64, lr=5e-2)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(600 + seed)
    model = Pricer(cfg["w"], cfg["depth"], leaky=fixed)
    steps = 120
    batches = []
    for _ in range(steps):
        B = cfg["bs"]
        u = torch.rand(B, 5, generator=g)
        m = 0.6 + 0.6 * u[:, 0] ** 1.5  # skewed towards OTM calls
        tau = 0.05 + 1.0 * u[:, 1]
        r = 0.03 * u[:, 2]
        q = 0.02 * u[:, 3]
        sig = 0.1 + 0.3 * u[:, 4]
        x = torch.stack([m - 1.0, tau, r * 10, q * 10, sig], 1)
        batches.append((x, bs_call(m, tau, r, q, sig) * 10))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
