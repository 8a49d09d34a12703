"""TARNet-style uplift / CATE model (Shalit et al. 2017) for a marketing campaign: a shared ReLU
representation (16 -> 32 -> 8) of customer features (10 binary segment flags and 6 log1p activity
counts, all non-negative) feeds two linear outcome heads (control / treated, zero-initialised so
training starts from the mean outcome); the factual head is chosen by the treatment flag (tuple
input (x, t)) and the loss is the MSE of the standardised spend.  Optimiser: SGD with momentum
0.9 at lr 0.3, the value the team's logistic response model used (a linear model tolerates it).
With momentum the updates overshoot, and since the inputs are all >= 0 an overshoot that makes a
unit's bias and weights negative switches it off for every customer at once.  Within the first
50-100 steps all eight units of the narrow representation layer are dead (and about half of the
first layer); no gradient reaches the representation again, both heads are left with their
biases, and the loss returns to and stays at the variance of the target (~1): a silent stall,
no NaN.  Fixed: lr 0.02, nothing else changed."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "phi.2"
SOURCE = ("Shalit, Johansson & Sontag 2017 (TARNet / CFR) uplift models; the dying-ReLU failure of "
          "momentum SGD with a learning rate taken from a linear baseline on non-negative inputs "
          "(CS231n notes: 'as much as 40% of your network can be dead' with a too-high learning rate)")


class TARNet(nn.Module):
    def __init__(self, n_feat=16, hidden=32, rep=8):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(), nn.Linear(hidden, rep), nn.ReLU())
        self.h0 = nn.Linear(rep, 1)
        self.h1 = nn.Linear(rep, 1)
        for head in (self.h0, self.h1):              # start from the (standardised) mean outcome
            nn.init.zeros_(head.weight)
            nn.init.zeros_(head.bias)

    def forward(self, x, t):
        r = self.phi(x)
        y0 = self.h0(r).squeeze(-1)
        y1 = self.h1(r).squeeze(-1)
        return {"y0": y0, "y1": y1, "factual": torch.where(t > 0.5, y1, y0)}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_feat, bs, steps = 16, 128, 200
    w0 = torch.randn(n_feat, generator=g) / 4
    wt = torch.randn(n_feat, generator=g) / 4
    wp = torch.randn(n_feat, generator=g) / 4
    centre = torch.cat([torch.full((10,), 0.3), torch.full((6,), 1.3)])

    def sample(n):
        flags = (torch.rand(n, 10, generator=g) < 0.3).float()
        counts = torch.log1p(torch.poisson(torch.full((n, 6), 3.0), generator=g))
        x = torch.cat([flags, counts], dim=1)
        xc = x - centre
        t = (torch.rand(n, generator=g) < torch.sigmoid(xc @ wp)).float()
        mu0 = 4.0 + 2.0 * torch.relu(xc @ w0) + 0.5 * torch.sin(2 * xc[:, 10])
        tau = 0.8 * torch.tanh(xc @ wt)
        y = mu0 + t * tau + 0.3 * torch.randn(n, generator=g)
        return x, t, y

    _, _, y_ref = sample(4096)
    y_mu, y_sd = y_ref.mean(), y_ref.std()          # standardise spend with training statistics
    batches = []
    for s in range(steps):
        x, t, y = sample(bs)
        batches.append(((x, t), (y - y_mu) / y_sd))

    model = TARNet(n_feat)
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else 0.3, momentum=0.9)

    def loss_fn(out, target):
        return ((out["factual"] - target) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
