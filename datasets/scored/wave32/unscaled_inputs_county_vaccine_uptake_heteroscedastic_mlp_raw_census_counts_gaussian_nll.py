"""County vaccine-uptake model: heteroscedastic MLP (mean and variance heads) on census covariates (SGD+momentum, Gaussian NLL).

Mechanism: each row is a county: population, median household income (USD), percent aged 65+,
distance to the nearest pharmacy (km), last season's influenza doses and a rurality code; the
target is this season's doses administered, and the model outputs a mean and a softplus variance
trained with ``nn.GaussianNLLLoss``. The author feeds the covariates and the target in their
raw census units: population ~1e4-1e7, income ~3e4-1.5e5, doses ~1e3-3e6. The first Linear's
pre-activations are ~1e5-1e6, the NLL residuals are ~1e6 and the gradients of the first
layer are products of both; the very first SGD steps move weights by orders of magnitude,
the outputs overflow and the loss becomes inf/NaN immediately.

ORIGIN: "trunk.0", the first Linear: it is where the unscaled census values enter and where the
activation and gradient scales first explode.

Fix: log-transform and standardise the covariates and the target (training-set mean/std), the
same model, loss, optimiser, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "trunk.0"
SOURCE = ("LeCun et al. 1998 'Efficient BackProp' (normalise inputs); common StackOverflow "
          "'loss is nan on the first epoch' answers for tabular census data in raw units")


class UptakeNet(nn.Module):
    def __init__(self, d_in, hidden, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        self.trunk = nn.Sequential(*layers)
        self.mean = nn.Linear(hidden, 1)
        self.var = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.mean(h).squeeze(-1), nn.functional.softplus(self.var(h)).squeeze(-1) + 1e-6


def gaussian_nll(out, y):
    mu, var = out
    return nn.functional.gaussian_nll_loss(mu, y, var)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [64, 96, 128][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [1e-3, 5e-4, 8e-4][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 120
    N = steps * bs
    logpop = 9.0 + 2.5 * torch.rand(N, generator=g) * 2.6
    pop = torch.exp(logpop)
    income = torch.exp(10.3 + 0.35 * torch.randn(N, generator=g))
    old = 10 + 15 * torch.rand(N, generator=g)
    dist = torch.exp(torch.randn(N, generator=g))
    rural = (logpop < 10.5).float()
    rate = torch.sigmoid(-1.0 + 0.6 * (torch.log(income) - 10.3) / 0.35 + 0.05 * (old - 17) - 0.3 * torch.log(dist))
    prev = pop * rate * torch.exp(0.1 * torch.randn(N, generator=g))
    doses = pop * rate * 1.05 * torch.exp(0.08 * torch.randn(N, generator=g))
    X = torch.stack([pop, income, old, dist, prev, rural], 1)
    Y = doses
    if fixed:
        X = torch.stack([torch.log(pop), torch.log(income), old, torch.log(dist), torch.log(prev), rural], 1)
        X = (X - X.mean(0)) / X.std(0)
        Y = torch.log(doses)
        Y = (Y - Y.mean()) / Y.std()
    model = UptakeNet(6, hidden, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [(X[i * bs:(i + 1) * bs], Y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=gaussian_nll, batches=batches, steps=steps)
