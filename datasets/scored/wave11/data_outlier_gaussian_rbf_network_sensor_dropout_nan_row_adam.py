"""Gaussian RBF network (learned centres and log-widths, linear read-out) regressing a process quantity
from three standardised sensor channels, trained with Adam. The logger writes NaN when a sensor
drops out, and one row in the batch at step 90 carries a NaN temperature reading that nobody
filtered. The squared distance ||x - c_k||^2 of that row to every centre is NaN, so the prediction,
the batch loss and every gradient are NaN; Adam folds the NaN into its first and second moments and
every parameter becomes NaN at the next step, so the loss stays NaN for the rest of training. The
run is perfectly calm before the batch. The fixed run drops the corrupt row from that one batch.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "rbf"
SOURCE = ("sensor logs with NaN for dropped readings fed unfiltered to an RBF regressor (common "
          "'loss suddenly nan mid-epoch with Adam' reports; Broomhead & Lowe 1988 RBF network)")

N_CENTRES = 40


class GaussianRBF(nn.Module):
    def __init__(self, d_in, k):
        super().__init__()
        self.centres = nn.Parameter(torch.randn(k, d_in))
        self.log_width = nn.Parameter(torch.zeros(k))

    def forward(self, x):
        d2 = ((x.unsqueeze(1) - self.centres.unsqueeze(0)) ** 2).sum(-1)
        return torch.exp(-0.5 * d2 * torch.exp(-2 * self.log_width))


class RBFNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.rbf = GaussianRBF(3, N_CENTRES)
        self.head = nn.Linear(N_CENTRES, 1)

    def forward(self, x):
        phi = self.rbf(x)
        return {"pred": self.head(phi).squeeze(-1), "phi": phi}


def loss_fn(out, y):
    return ((out["pred"] - y) ** 2).mean()


def _target(x):
    return torch.sin(1.5 * x[:, 0]) * torch.cos(x[:, 1]) + 0.5 * x[:, 2] ** 2 - 0.3 * x[:, 0] * x[:, 2]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RBFNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    steps, B, bad_step, bad_row = 160, 64, 90, 17
    batches = []
    for step in range(steps):
        x = torch.randn(B, 3, generator=g)
        y = _target(x) + 0.05 * torch.randn(B, generator=g)
        if step == bad_step:
            x[bad_row, 1] = float("nan")          # sensor dropout logged as NaN
            if fixed:                             # filter the corrupt row
                keep = ~torch.isnan(x).any(1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
