"""Combined Actuarial Neural Network (CANN, Wüthrich & Merz 2019) for motor claim cost per
policy: log mu = offset(log exposure) + GLM linear predictor (skip connection) + NN adjustment,
with the NN's output layer zero-initialised so training starts exactly at the GLM; trained with
the Tweedie deviance (power 1.5) on pure premiums where ~90% of policies have zero claims.

Looks alarming but is healthy: most targets are exact zeros, individual losses are very
skewed (a few large claims dominate some batches, so the loss spikes), and the curve is flat for
the first steps because the NN adjustment starts at 0 and the GLM part is the starting point.
The NN then picks up the age x vehicle-power interaction the GLM misses.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Schelldorfer & Wüthrich 2019 'Nesting classical actuarial models into neural networks' (CANN); Tweedie deviance for pure premium"


class CANN(nn.Module):
    def __init__(self, n_in, width):
        super().__init__()
        self.glm = nn.Linear(n_in, 1)
        self.nn = nn.Sequential(nn.Linear(n_in, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 1))
        nn.init.zeros_(self.nn[4].weight)
        nn.init.zeros_(self.nn[4].bias)
        with torch.no_grad():
            self.glm.bias.fill_(5.0)

    def forward(self, x, log_expo):
        return (log_expo + self.glm(x).squeeze(-1) + self.nn(x).squeeze(-1))  # log mu


def tweedie_dev(log_mu, y, p=1.5):
    mu = log_mu.exp()
    return (2 * (-y * torch.exp((1 - p) * log_mu) / (1 - p) + torch.exp((2 - p) * log_mu) / (2 - p))).mean() \
        + (2 * y.clamp_min(0) ** (2 - p) / ((1 - p) * (2 - p))).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=20, bs=256, lr=1e-2), dict(w=32, bs=192, lr=5e-3), dict(w=16, bs=320, lr=1e-2)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1800 + seed)
    n_in = 5
    model = CANN(n_in, cfg["w"])
    steps = 90
    batches = []
    for _ in range(steps):
        B = cfg["bs"]
        x = torch.randn(B, n_in, generator=g)  # standardised age, power, density, bonus-malus, region score
        expo = 0.2 + 0.8 * torch.rand(B, generator=g)
        eta = -2.5 + 0.3 * x[:, 3] + 0.2 * x[:, 2] + 1.0 * torch.relu(-x[:, 0]) * torch.relu(x[:, 1]) * 1.5
        n = torch.poisson(expo * eta.exp(), generator=g)
        sev = torch.distributions.Gamma(torch.full((B,), 2.0), torch.full((B,), 2.0 / 1500.0)).sample()
        y = n * sev
        batches.append(((x, expo.log()), y / 100.0))  # claim cost in hundreds
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=tweedie_dev, batches=batches, steps=steps)
