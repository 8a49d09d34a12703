"""Perishable-goods ordering (neural newsvendor) trained on the negative summed profit (healthy).

What happens: an MLP maps store/day features (day of week, weather, local events,
promotion, price, recent sales) to the next-day order quantity of a fresh bakery
item, q = softplus(net(x)) * scale. Following the "deep newsvendor" approach the
loss is the negative realised profit summed over the stores of the batch:
    -sum( price * min(q, D) - cost * q + salvage * max(q - D, 0) ).
The loss is negative as soon as ordering is profitable, it is large in magnitude
(a sum over 64-160 stores, in currency units) and it jumps on days with event-driven
demand surges (the surge batches make the realised profit, hence the loss, swing),
then goes back. Gradients are piecewise constant (the min/max kinks) and exactly zero
for a store whose order is exactly matched. The model learns the critical-fractile
order policy and the profit keeps increasing (the loss keeps decreasing).

A naive monitor may flag: negative loss, large summed loss, spikes. None is a fault.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Oroojlooyjadid, Snyder & Takac 2020 'Applying deep learning to the newsvendor problem' "
          "(IISE Transactions); Huber et al. 2019 'A data-driven newsvendor problem: from data to "
          "decision' (bakery demand data).")

PRICE, COST, SALVAGE, SCALE = 3.0, 1.2, 0.2, 50.0


class OrderNet(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.q = nn.Linear(d, 1)

    def forward(self, x):
        return F.softplus(self.q(self.body(x))).squeeze(-1) * SCALE


def neg_profit(q, d):
    sold = torch.minimum(q, d)
    leftover = torch.relu(q - d)
    return -(PRICE * sold - COST * q + SALVAGE * leftover).sum()


def _days(g, n, w, surge):
    x = torch.randn(n, 10, generator=g)
    mean = 60 * torch.exp(0.25 * (x[:, :6] @ w) + 0.2 * torch.relu(x[:, 6]))
    if surge:
        x[:, 7] += 2.5                      # local event flag
        mean = mean * 1.8
    d = torch.poisson(mean, generator=g)
    return x, d


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(333 + seed)
    width = [64, 32, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [64, 128, 160][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    steps = 200
    w = torch.randn(6, generator=g) / 6 ** 0.5
    surge_days = set(int(s) for s in torch.randint(20, steps, (8,), generator=g))
    model = OrderNet(10, width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_days(g, bs, w, s in surge_days) for s in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=neg_profit, batches=batches, steps=steps)
