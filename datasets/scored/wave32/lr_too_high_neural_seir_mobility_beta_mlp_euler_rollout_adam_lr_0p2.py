"""Neural compartmental model: SEIR with a mobility-driven transmission rate beta(t) = softplus(MLP(mobility_t)), Euler rollout (Adam, MSE on log incidence).

Mechanism: for each region the model reads 60 days of three mobility indices (workplace,
transit, residential), an MLP maps each day's indices to beta(t), and a differentiable SEIR
(sigma = 1/3, gamma = 1/5, daily Euler steps) produces daily incidence, compared with observed
incidence by MSE on log1p(cases per 100k). The author reuses lr = 0.2 from the classical fit of
three scalar SEIR parameters, now for a 2-3 layer MLP under Adam. Each Adam step moves every
weight by ~0.2, so beta(t) swings from ~0 (epidemic dies out) to several per day (epidemic
burns through in a week); the rollout amplifies each overshoot exponentially. Depending on how
far the first steps overshoot, either the updates keep jumping between the two regimes and the
loss sits far above its starting level (stall), or beta grows so large that the daily Euler
step drives S below zero, incidence turns negative and log1p returns NaN.

ORIGIN: None: an lr problem is global, not started by one module.

Fix: lr = 2e-3 for the neural beta (same model, optimiser, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Neural/hybrid SEIR models with learned time-varying transmission (e.g. Dandekar & "
          "Barbastathis 2020 'Neural network aided quarantine control'); Adam lr far too large "
          "for an MLP (Karpathy's 3e-4 rule of thumb), loss oscillates without improving")


class NeuralSEIR(nn.Module):
    def __init__(self, hidden, depth, days):
        super().__init__()
        layers, d = [], 3
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.Tanh()]
            d = hidden
        layers.append(nn.Linear(d, 1))
        self.beta_net = nn.Sequential(*layers)
        self.days = days

    def forward(self, mob):  # mob: (B, days, 3)
        beta = nn.functional.softplus(self.beta_net(mob)).squeeze(-1)      # (B, days)
        B = mob.shape[0]
        S = torch.full((B,), 1.0 - 1e-4)
        E = torch.full((B,), 5e-5)
        I = torch.full((B,), 5e-5)
        inc = []
        for t in range(self.days):
            new_e = beta[:, t] * S * I
            new_i = E / 3.0
            S = S - new_e
            E = E + new_e - new_i
            I = I + new_i - I / 5.0
            inc.append(new_i)
        return torch.log1p(torch.stack(inc, 1) * 1e5)                       # log1p cases per 100k


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [16, 24, 32][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [8, 12, 6][seed % 3]
    lr = 2e-3 if fixed else [0.2, 0.3, 0.15][seed % 3]
    steps = 80
    days = 60
    N = steps * bs
    t = torch.arange(days).float()
    onset = 10 + 20 * torch.rand(N, 1, generator=g)
    lockdown = torch.sigmoid((t - onset) / 2.0)                            # NPIs reduce mobility
    work = 1.0 - 0.6 * lockdown + 0.05 * torch.randn(N, days, generator=g)
    transit = 1.0 - 0.7 * lockdown + 0.05 * torch.randn(N, days, generator=g)
    resid = 0.2 * lockdown + 0.03 * torch.randn(N, days, generator=g)
    mob = torch.stack([work, transit, resid], -1)
    beta_true = 0.15 + 0.45 * (0.5 * work + 0.5 * transit).clamp_min(0)
    truth = NeuralSEIR(1, 1, days)
    with torch.no_grad():
        S = torch.full((N,), 1.0 - 1e-4); E = torch.full((N,), 5e-5); I = torch.full((N,), 5e-5)
        inc = []
        for d in range(days):
            ne = beta_true[:, d] * S * I; ni = E / 3.0
            S = S - ne; E = E + ne - ni; I = I + ni - I / 5.0
            inc.append(ni)
        cases = torch.stack(inc, 1) * 1e5
        obs = torch.log1p(torch.poisson(cases, generator=g))
    del truth
    model = NeuralSEIR(hidden, depth, days)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    batches = [(mob[i * bs:(i + 1) * bs], obs[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
