"""Regional GDP-growth nowcaster on a panel of regions: an LSTM reads 8 quarters of standardised
indicators per region (employment growth, retail sales, electricity use, business-survey
balances, lagged GDP growth) and a linear head predicts next-quarter growth; the loss is the
SUM of squared errors over the regions in the batch (as in the pooled least-squares objective
the team used before), SGD.

Mechanism (lr_too_high). The learning rate 0.05 was tuned for the pooled-OLS baseline fitted on
one region-quarter at a time. With a summed loss over 32-96 regions, the gradient (and the
curvature of the head) is 32-96 times larger, so the effective step is far beyond the stability
limit 2/lambda_max of the output layer: the first updates overshoot, the head weights grow with
alternating sign, the LSTM gates saturate and the error grows geometrically until the loss
overflows to inf/NaN within a few dozen steps.

ORIGIN = None: an oversized step is a property of the optimiser configuration, not of a
module; every parameter overshoots together.

Fix: a learning rate for the summed objective (4e-3, from an lr range test on this model:
about base_lr/bs up to a small factor). Same model, summed loss, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("lr tuned for a per-example objective reused with reduction='sum' (PyTorch forum "
          "'MSELoss reduction sum vs mean, loss explodes'); LSTM nowcasting of regional GDP "
          "(e.g. Richardson, van Florenstein Mulder & Vehbi 2021, RBNZ nowcasting with ML)")


class Nowcaster(nn.Module):
    def __init__(self, d_in, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(d_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(h[:, -1]).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [32, 64, 96][seed % 3]
    base_lr = [0.05, 0.04, 0.06][seed % 3]
    steps = 120
    T, D = 8, 6

    model = Nowcaster(D, hidden, layers)
    coef = torch.randn(D, generator=g).abs() * 0.5 + 0.2

    def sample(n):
        x = torch.randn(n, T, D, generator=g)
        x[:, :, 0] = 0.7 * x[:, :, 0] + 0.3 * torch.randn(n, 1, generator=g)   # persistent growth
        y = x[:, -1] @ coef + 0.5 * x[:, -4:, 0].mean(1) + 0.3 * torch.randn(n, generator=g)
        return x, y

    batches = [sample(bs) for _ in range(steps)]
    lr = 4e-3 if fixed else base_lr
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss(reduction="sum")
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
