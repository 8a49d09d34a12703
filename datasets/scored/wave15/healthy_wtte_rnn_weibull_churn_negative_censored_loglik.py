"""WTTE-RNN (Martinsson 2016) customer churn / time-to-next-purchase model: a GRU over each
customer's weekly activity outputs Weibull (alpha, beta) and is trained with the continuous
right-censored Weibull negative log-likelihood.

Looks alarming but is healthy: the loss is a negative log-likelihood of a continuous density
and goes negative as the fit sharpens; batches with many censored customers give visibly lower
loss than batches with many observed events (spiky curve); alpha is parameterised through exp
with a bias initialised at the log mean time-to-event (the WTTE recipe), beta via softplus.
Nothing is wrong: the loss decreases steadily on average.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Martinsson 2016 'WTTE-RNN: Weibull Time To Event Recurrent Neural Network'; negative continuous censored log-likelihood"


class WTTE(nn.Module):
    def __init__(self, hidden, init_alpha):
        super().__init__()
        self.gru = nn.GRU(3, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)
        with torch.no_grad():
            self.head.bias.copy_(torch.tensor([math.log(init_alpha), 0.5]))

    def forward(self, x):
        h, _ = self.gru(x)
        o = self.head(h[:, -1])
        return torch.stack([o[:, 0].exp(), nn.functional.softplus(o[:, 1]) + 0.05], 1)


def weibull_censored_nll(ab, target):
    a, b = ab[:, 0], ab[:, 1]
    t, u = target[:, 0], target[:, 1]
    ta = (t + 1e-6) / a
    loglik = u * (torch.log(b) - torch.log(a) + (b - 1) * torch.log(ta)) - ta ** b
    return -loglik.mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=16, L=12, bs=64, lr=5e-3), dict(h=32, L=16, bs=32, lr=3e-3), dict(h=24, L=10, bs=96, lr=5e-3)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1600 + seed)
    model = WTTE(cfg["h"], init_alpha=0.3)
    steps = 80
    batches = []
    for _ in range(steps):
        B, L = cfg["bs"], cfg["L"]
        engage = torch.randn(B, generator=g)
        x = torch.stack([engage[:, None] + 0.5 * torch.randn(B, L, generator=g),
                         (torch.rand(B, L, generator=g) < torch.sigmoid(engage)[:, None]).float(),
                         torch.randn(B, L, generator=g)], -1)
        alpha = 0.3 * torch.exp(-0.8 * engage)  # time to churn in years
        beta = 2.0
        t = alpha * (-torch.log(torch.rand(B, generator=g))) ** (1 / beta)
        censor_frac = 0.2 + 0.5 * torch.rand(1, generator=g)  # varies a lot across batches
        c = torch.rand(B, generator=g) < censor_frac
        cens_t = t * torch.rand(B, generator=g)
        tt = torch.where(c, cens_t, t)
        batches.append((x, torch.stack([tt, (~c).float()], 1)))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=weibull_censored_nll, batches=batches, steps=steps)
