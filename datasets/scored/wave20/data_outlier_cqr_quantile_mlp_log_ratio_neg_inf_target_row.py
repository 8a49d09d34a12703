"""Conformalized quantile regression (CQR, Romano et al. 2019) training stage: an MLP with three
quantile heads (5%, 50%, 95%) trained with the pinball loss on log(demand ratio) targets.

Mechanism: the run is calm until one mid-run batch contains rows whose previous-period demand was
zero, so the target log(y_t / y_{t-1}) was materialised as +inf / -inf by the ETL job.  The pinball
loss of that batch is infinite and its gradient is NaN; Adam writes the NaN into every weight.
ORIGIN: None - the corruption is in the data, not in a module.
Fix: drop non-finite target rows from that batch (the only change); the rest of the data is
identical."""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "log-ratio targets with zero denominators in quantile/CQR forecasting pipelines (common Kaggle/M5 report of inf targets)"

QUANTILES = (0.05, 0.5, 0.95)


class QuantileMLP(nn.Module):
    def __init__(self, d_in, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.head = nn.Linear(width, len(QUANTILES))

    def forward(self, x):
        return self.head(self.body(x))


def pinball(pred, y):
    q = torch.tensor(QUANTILES, dtype=pred.dtype)
    diff = y - pred
    return torch.maximum(q * diff, (q - 1) * diff).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [64, 32, 128][seed % 3]
    lr = [3e-3, 1e-3, 2e-3][seed % 3]
    bs = [64, 128, 32][seed % 3]
    bad_step = [37, 55, 24][seed % 3]
    steps = 80
    d_in = 8
    model = QuantileMLP(d_in, width)
    w = torch.randn(d_in, 1, generator=g) * 0.5
    batches = []
    for t in range(steps):
        x = torch.randn(bs, d_in, generator=g)
        noise = (0.3 + 0.3 * x[:, 1:2].abs()) * torch.randn(bs, 1, generator=g)
        y = x @ w + noise
        if t == bad_step:
            idx = torch.randperm(bs, generator=g)[:3]
            y[idx[0]] = float("inf")
            y[idx[1:]] = float("-inf")
            if fixed:
                keep = torch.isfinite(y).squeeze(1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=pinball, batches=batches, steps=steps)
