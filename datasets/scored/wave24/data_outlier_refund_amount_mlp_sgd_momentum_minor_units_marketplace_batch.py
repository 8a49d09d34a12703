"""Returns-reserve model: an MLP regresses the (standardised) refund amount of an order from
standardised order features (basket value, discount, item count, category mix, customer's
past return rate, size-fit flags ...), MSE loss, SGD with momentum.

Mechanism: one early batch (its position varies with the seed) comes from a newly onboarded
marketplace feed whose money columns (basket value, discount, mean item price and the refund
target) are in minor units (cents / yen), yet the pipeline standardises them with the dollar
statistics of the main feed, so half of that batch arrives with z-scores of several hundred.
The loss of that batch is ~1e5 times the normal one and its gradient, squared through the
MSE and the ReLU layers, is of the same order; the SGD+momentum step throws the weights so
far that the next forward pass overflows and the loss becomes inf/NaN within 1-3 steps. The
run is perfectly healthy before that batch.

ORIGIN: "net.0", the first Linear, which is the first layer the corrupt minor-unit columns
hit (the blow-up of activations and gradients starts there and spreads to every layer).

Fix: winsorise the standardised features and target of every batch to [-6, 6] (the usual
guard in the feature pipeline), which bounds the corrupt rows; everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("Mixed-currency / minor-unit rows from a newly onboarded marketplace feed in "
          "e-commerce ETL (prices in cents vs dollars, JPY without decimals); the classic "
          "'loss suddenly NaN after one bad batch' pattern of PyTorch forum threads")

MONEY = [0, 1, 2]     # basket value, discount, mean item price


class RefundMLP(nn.Module):
    def __init__(self, d, h, depth):
        super().__init__()
        layers, f = [], d
        for _ in range(depth):
            layers += [nn.Linear(f, h), nn.ReLU()]
            f = h
        layers.append(nn.Linear(f, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = 14
    h = [64, 96, 128][seed % 3]
    depth = 2 + seed % 2
    lr = [0.02, 0.03, 0.015][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 200
    bad_step = 20 + (41 * seed) % 90     # 20, 61, 102, ...
    torch.manual_seed(seed)
    model = RefundMLP(d, h, depth)
    w1 = torch.randn(d, 24, generator=g) / d ** 0.5
    w2 = torch.randn(24, generator=g) / 24 ** 0.5
    batches = []
    for t in range(steps):
        x = torch.randn(bs, d, generator=g)
        y = torch.relu(x @ w1) @ w2 + 0.6 * x[:, 0] - 0.4 * x[:, 1] + 0.1 * torch.randn(bs, generator=g)
        y = (y - 0.9) / 1.1
        if t == bad_step:
            # marketplace rows: money columns in minor units, standardised with $ stats
            rows = torch.rand(bs, generator=g) < 0.5
            x[rows.nonzero().squeeze(1)[:, None], torch.tensor(MONEY)] = \
                x[rows][:, MONEY] * 100.0 + 250.0
            y[rows] = y[rows] * 100.0 + 250.0
        if fixed:
            x = x.clamp(-6.0, 6.0)
            y = y.clamp(-6.0, 6.0)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
