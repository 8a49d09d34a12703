"""Heteroscedastic regressor trained with the beta-NLL loss (Seitzer et al. 2022: the Gaussian NLL
of every point weighted by stop-grad(var^beta), beta = 0.5).  ReLU MLP trunk, mean head and
softplus variance head; inputs are non-negative log1p(count) features that were not centred.

Mechanism: all inputs are positive, so the gradient of the first Linear has the same sign pattern
for every row.  With SGD+momentum at an lr copied from a standardised-input MSE baseline, the first
few updates drive the first-layer pre-activations of every unit below zero for every input
(weights and biases shift by far more than the input-weighted sum can recover).  Once all hidden
ReLUs of `trunk.1` (90-100%) output 0, the heads see a constant vector, no gradient reaches the trunk and
the beta-NLL plateaus at the value of a constant predictor.
ORIGIN: trunk.1, the first ReLU, which dies first and takes everything after it down.
Fix: an SGD lr suited to the un-centred positive inputs (the only change)."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "trunk.1"
SOURCE = "Seitzer et al. 2022 beta-NLL; dead ReLU after large SGD steps on positive inputs (CS231n notes, fastai forums)"


class BetaNLLRegressor(nn.Module):
    def __init__(self, d_in, width):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.mean = nn.Linear(width, 1)
        self.var = nn.Sequential(nn.Linear(width, 1), nn.Softplus())

    def forward(self, x):
        h = self.trunk(x)
        return self.mean(h), self.var(h) + 1e-4


def beta_nll(out, y, beta=0.5):
    mu, var = out
    nll = 0.5 * ((y - mu) ** 2 / var + var.log())
    return (nll * var.detach() ** beta).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = 0.01 if fixed else [0.1, 0.05, 0.3][seed % 3]
    steps = 100
    d_in = 12
    model = BetaNLLRegressor(d_in, width)
    w = torch.randn(d_in, 1, generator=g)
    batches = []
    for _ in range(steps):
        counts = torch.poisson(torch.rand(bs, d_in, generator=g) * 30, generator=g)
        x = torch.log1p(counts)
        z = (x - 2.7) @ w / d_in ** 0.5
        y = 2.0 * z + (0.2 + 0.4 * torch.sigmoid(z)) * torch.randn(bs, 1, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=beta_nll, batches=batches, steps=steps)
