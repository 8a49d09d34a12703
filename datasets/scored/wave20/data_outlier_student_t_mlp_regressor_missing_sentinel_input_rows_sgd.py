"""Heteroscedastic Student-t regressor: MLP trunk with location and log-scale heads and a learned
global log degrees-of-freedom, trained with the Student-t negative log-likelihood and SGD+momentum.
The Student-t likelihood makes the loss robust to outlying *targets*, which is why the user did not
bother cleaning the data.

Mechanism: one mid-run batch contains rows whose missing sensor readings were exported with the
logger sentinel -9999 in the input features.  The likelihood cannot protect against outlying
*inputs*: the trunk activations on those rows are ~1e4 x normal, the gradients w.r.t. the first
layer are enormous, SGD+momentum throws the weights far away and the loss becomes non-finite
(or the net is left wrecked).
ORIGIN: None - the bad values come from the data.
Fix: filter the sentinel rows from that batch (the only change)."""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "missing-value sentinel (-9999) rows in tabular sensor exports; robust likelihoods only cover target outliers"


class StudentTRegressor(nn.Module):
    def __init__(self, d_in, width):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.loc = nn.Linear(width, 1)
        self.log_scale = nn.Linear(width, 1)
        self.log_df = nn.Parameter(torch.tensor(math.log(4.0)))

    def forward(self, x):
        h = self.trunk(x)
        return self.loc(h), self.log_scale(h), self.log_df


def student_t_nll(out, y):
    loc, log_scale, log_df = out
    df = log_df.exp() + 1.0
    z = (y - loc) / log_scale.exp()
    lp = (torch.lgamma((df + 1) / 2) - torch.lgamma(df / 2) - 0.5 * torch.log(df * math.pi)
          - log_scale - (df + 1) / 2 * torch.log1p(z ** 2 / df))
    return -lp.mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [32, 64, 48][seed % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    bs = [32, 64, 48][seed % 3]
    bad_step = [30, 45, 60][seed % 3]
    n_bad = [2, 4, 3][seed % 3]
    steps = 90
    d_in = 6
    model = StudentTRegressor(d_in, width)
    w = torch.randn(d_in, 1, generator=g)
    batches = []
    for t in range(steps):
        x = torch.randn(bs, d_in, generator=g)
        eps = torch.randn(bs, 1, generator=g) / (torch.rand(bs, 1, generator=g) + 0.3)  # heavy-tailed noise
        y = 0.7 * (x @ w) + 0.2 * eps
        if t == bad_step:
            idx = torch.randperm(bs, generator=g)[:n_bad]
            x[idx, :3] = -9999.0
            if fixed:
                keep = (x > -9000).all(1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=student_t_nll, batches=batches, steps=steps)
