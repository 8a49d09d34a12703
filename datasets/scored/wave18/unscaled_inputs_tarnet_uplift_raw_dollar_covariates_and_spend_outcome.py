"""TARNet uplift model (coupon -> 30-day spend) trained on raw CRM columns.

Mechanism: TARNet (Shalit et al. 2017) learns a shared representation phi(x) with ELU
layers and two outcome heads h0 / h1 (control / treated); the factual head is trained with
MSE.  The CRM export is fed as is: annual income in dollars (~5e4), tenure in days
(~1e3), prior 90-day spend in dollars, sessions, age in years, and the target is the raw
30-day spend in dollars (hundreds to thousands).  The first Linear of phi receives inputs
of magnitude 1e4-1e5, its pre-activations are in the thousands, ELU is linear there, the
prediction error and the MSE are ~1e6-1e9 at step 0, and the gradients of the first layer
scale with x * error.  SGD with momentum (lr tuned for standardised data) makes the first
update overshoot by orders of magnitude and the loss is inf/NaN within a few steps.

ORIGIN is phi.0: the first layer that receives the unscaled covariates; everything after
it only inherits the blown-up scale.

Fix: standardise the covariates (z-score with train statistics) and the outcome (fit on
z-scored spend), exactly as the fixed run does; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "phi.0"
SOURCE = ("TARNet / CFRNet (Shalit, Johansson & Sontag, ICML 2017) applied to coupon uplift "
          "on raw CRM features; the standard 'normalise your inputs and targets' failure "
          "behind many 'loss is nan after first epoch' regression reports.")


class TARNet(nn.Module):
    def __init__(self, d_in, h, depth):
        super().__init__()
        layers = []
        d = d_in
        for _ in range(depth):
            layers += [nn.Linear(d, h), nn.ELU()]
            d = h
        self.phi = nn.Sequential(*layers)
        self.h0 = nn.Sequential(nn.Linear(h, h // 2), nn.ELU(), nn.Linear(h // 2, 1))
        self.h1 = nn.Sequential(nn.Linear(h, h // 2), nn.ELU(), nn.Linear(h // 2, 1))

    def forward(self, x, t):
        z = self.phi(x)
        y0 = self.h0(z).squeeze(-1)
        y1 = self.h1(z).squeeze(-1)
        return torch.where(t > 0.5, y1, y0)


def _crm_table(n, g):
    income = torch.exp(10.8 + 0.5 * torch.randn(n, generator=g))          # dollars / year
    tenure = 3000 * torch.rand(n, generator=g)                              # days
    prior = torch.exp(6.3 + 0.8 * torch.randn(n, generator=g))             # dollars / 90 d
    sessions = torch.poisson(torch.full((n,), 18.0), generator=g)          # visits / 30 d
    age = 18 + 60 * torch.rand(n, generator=g)                              # years
    mobile = (torch.rand(n, generator=g) < 0.6).float()
    x = torch.stack([income, tenure, prior, sessions, age, mobile], dim=1)
    # targeted coupon: heavier spenders more likely to be treated
    logit = 0.8 * (torch.log(prior) - 6.3) + 0.5 * (mobile - 0.6)
    t = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    base = 0.35 * prior + 0.002 * income + 3.0 * sessions + 0.02 * tenure
    uplift = 40.0 + 0.12 * prior * mobile
    y = base + t * uplift + 60.0 * torch.randn(n, generator=g)
    return x, t, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7 + seed)
    h = [64, 128, 96][seed]
    depth = [2, 3, 2][seed]
    lr = [1e-3, 1.5e-3, 3e-3][seed]
    bs = [128, 256, 64][seed]
    steps = 120

    x, t, y = _crm_table(bs * steps, g)
    if fixed:
        x = (x - x.mean(0)) / x.std(0)
        y = (y - y.mean()) / y.std()
    batches = []
    for i in range(steps):
        sl = slice(i * bs, (i + 1) * bs)
        batches.append(((x[sl], t[sl]), y[sl]))

    model = TARNet(x.shape[1], h, depth)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
