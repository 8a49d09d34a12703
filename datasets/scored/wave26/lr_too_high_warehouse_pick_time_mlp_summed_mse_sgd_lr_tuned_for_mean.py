"""Warehouse order pick-time regressor (MLP) with a summed MSE and an lr tuned for the mean.

Mechanism: the model predicts the (standardised) picking time of an order from its
profile: number of lines and units, distinct aisles/zones, travel distance of the
S-shape route, share of bulky/heavy SKUs, picker tenure, shift, congestion index...
The loss was switched to ``MSELoss(reduction='sum')`` so that a "per-order" error is
logged, but the SGD learning rate kept the value that was tuned with the mean loss.
The gradient is therefore batch-size (128-256) times larger and the effective step
lr * B is far beyond 2 / lambda_max of the problem: the first step already overshoots,
every following step multiplies the error, and the loss overflows to inf/NaN within
a handful of steps.

ORIGIN: None - an optimiser setting (the step size relative to the loss scale); no
module is the start.

Fix: divide the learning rate by the batch size (the lr that matches the summed
loss); same model, summed loss, data, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Order-picking time estimation with ML (de Koster et al. 2007 review of order picking; "
          "e.g. Matusiak et al. 2017 data-driven pick-time models); PyTorch forum threads "
          "'loss explodes after changing reduction to sum' (effective lr scales with batch size).")


class PickTimeMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(-1)


def _orders(g, n, w):
    x = torch.randn(n, 10, generator=g)  # standardised order / picker / shift features
    lines, units, aisles, dist, bulky, tenure, shift, cong = (x[:, i] for i in range(8))
    t = (0.5 * lines + 0.2 * units + 0.4 * aisles + 0.6 * dist + 0.25 * bulky * (units > 0)
         - 0.3 * torch.tanh(tenure) + 0.15 * shift + 0.35 * torch.relu(cong) + x[:, 8:] @ w)
    y = t + 0.2 * torch.randn(n, generator=g)
    return x, y / 1.1


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(33 + seed)
    width = [128, 64, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [128, 256, 192][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]  # tuned with reduction='mean'
    if fixed:
        lr = lr / bs
    steps = 120
    w = 0.2 * torch.randn(2, generator=g)
    model = PickTimeMLP(10, width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_orders(g, bs, w) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(reduction="sum"), batches=batches,
                steps=steps)
