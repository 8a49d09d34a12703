"""Deep ensemble for regression with predictive uncertainty (Lakshminarayanan et al. 2017):
M independently initialised MLPs, each with a mean and a log-variance output, trained jointly with
the sum of the members' Gaussian NLLs (nn.GaussianNLLLoss, var = exp(log_var)), Adam.

Mechanism: the house-price table is fed raw: living area in sq ft (~1e3), lot size (~1e4),
year built (~2e3), distance in metres (~1e3), and the target in dollars (~3e5).  The first Linear
of each member receives inputs 3-4 orders of magnitude above unit scale, so its pre-activations,
and with them the log-variance head, are in the hundreds/thousands from step 0: exp(log_var)
overflows to inf (or underflows to 0 and (y-mu)^2/var explodes), the NLL is inf/NaN immediately.
ORIGIN: members.0.net.0 - the first layer that receives the unscaled inputs (every member's first
layer does; member 0 is the first evaluated).
Fix: standardise the features and the target with training-set statistics (the only change)."""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "members.0.net.0"
SOURCE = "Lakshminarayanan et al. 2017 deep ensembles; raw Ames/California housing features and dollar targets giving inf Gaussian NLL"


class Member(nn.Module):
    def __init__(self, d_in, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                 nn.Linear(width, 2))

    def forward(self, x):
        out = self.net(x)
        return out[:, :1], out[:, 1:]


class DeepEnsemble(nn.Module):
    def __init__(self, d_in, width, m):
        super().__init__()
        self.members = nn.ModuleList([Member(d_in, width) for _ in range(m)])

    def forward(self, x):
        outs = [mem(x) for mem in self.members]
        return torch.stack([o[0] for o in outs]), torch.stack([o[1] for o in outs])


_nll = nn.GaussianNLLLoss()


def ensemble_nll(out, y):
    mu, log_var = out
    return sum(_nll(mu[i], y, log_var[i].exp()) for i in range(mu.shape[0]))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    m = [5, 3, 4][seed % 3]
    width = [50, 64, 32][seed % 3]
    bs = [32, 64, 100][seed % 3]
    lr = [1e-3, 3e-3, 2e-3][seed % 3]
    steps = 80
    n = 4000
    sqft = 1500 + 500 * torch.randn(n, generator=g)
    lot = 9000 + 3000 * torch.rand(n, generator=g)
    year = 1900 + 120 * torch.rand(n, generator=g)
    dist = 3000 * torch.rand(n, generator=g)
    rooms = torch.randint(2, 9, (n,), generator=g).float()
    X = torch.stack([sqft, lot, year, dist, rooms], 1)
    price = 120 * sqft + 3 * lot + 800 * (year - 1900) - 20 * dist + 8000 * rooms
    price = price * (1 + 0.1 * torch.randn(n, generator=g))
    Y = price[:, None]
    if fixed:
        X = (X - X.mean(0)) / X.std(0)
        Y = (Y - Y.mean()) / Y.std()
    model = DeepEnsemble(X.shape[1], width, m)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n, (bs,), generator=g)
        batches.append((X[idx], Y[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=ensemble_nll, batches=batches, steps=steps)
