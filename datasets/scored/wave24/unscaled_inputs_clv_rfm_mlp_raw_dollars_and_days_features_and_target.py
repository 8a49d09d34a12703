"""Customer-lifetime-value (next-12-month spend) regressor for an online shop: an MLP on the
customer's RFM table -- recency (days since last order), frequency (orders), monetary (total
spend, $), average order value ($), tenure (days since first order), returns count, newsletter
flag -- trained with MSE on next-year spend in dollars, Adam.

Mechanism: the features go straight from the warehouse query into the model: recency and
tenure in days (0-2000), spend in dollars (up to ~20 000), next to 0/1 flags; the target is
in dollars too (mean of several hundred, long tail). From the first step the loss is ~1e4-1e5
and the first-layer pre-activations are in the hundreds to thousands, dominated by the
tenure and money columns. Adam moves each weight by ~lr per step, which is negligible next to
these scales in some directions and violent in others (the hidden units are driven by tenure
and spend alone), and the dollar-valued squared errors of the heavy-tailed target dominate
every batch: the loss does not come down over the run -- it keeps jumping between 1e4 and
1e5 -- while the same model on standardised data fits within a few dozen steps.

ORIGIN: "net.0", the first Linear, which receives the unscaled columns (every downstream layer
only inherits their scale).

Fix: log1p the money and day columns, z-score all features with the training statistics, and
train on the standardised log target; same model, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("RFM / customer-lifetime-value models on raw warehouse columns (Fader, Hardie & Lee "
          "RFM-CLV; 'standardise your inputs' -- LeCun et al. Efficient BackProp sec. 4.3); "
          "common forum reports of huge, non-decreasing MSE on dollar-valued targets")


class CLVNet(nn.Module):
    def __init__(self, d, hid, depth):
        super().__init__()
        layers, f = [], d
        for _ in range(depth):
            layers += [nn.Linear(f, hid), nn.ReLU()]
            f = hid
        layers.append(nn.Linear(f, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _customers(g, n):
    tenure = 30 + 1800 * torch.rand(n, generator=g)
    freq = 1 + torch.poisson(torch.ones(n) * 2 + tenure / 200, generator=g)
    aov = torch.exp(3.8 + 0.6 * torch.randn(n, generator=g))
    monetary = freq * aov
    recency = torch.minimum(tenure, torch.exp(4.0 + 1.0 * torch.randn(n, generator=g)))
    returns = torch.poisson(freq * 0.15, generator=g)
    news = (torch.rand(n, generator=g) < 0.4).float()
    x = torch.stack([recency, freq, monetary, aov, tenure, returns, news], 1)
    rate = freq / (tenure / 365) * torch.exp(-recency / 180) * (1 + 0.3 * news)
    y = rate * aov * torch.exp(0.3 * torch.randn(n, generator=g))
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hid = [64, 96, 128][seed % 3]
    depth = 2 + seed % 2
    bs = [128, 96, 160][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    steps = 200
    torch.manual_seed(seed)
    model = CLVNet(7, hid, depth)
    ref_x, ref_y = _customers(g, 5000)                  # training-set statistics
    money_days = [0, 2, 3, 4]
    def prep(x, y):
        x = x.clone()
        x[:, money_days] = torch.log1p(x[:, money_days])
        return x, torch.log1p(y)
    rx, ry = prep(ref_x, ref_y)
    mu, sd, ymu, ysd = rx.mean(0), rx.std(0), ry.mean(), ry.std()
    batches = []
    for _ in range(steps):
        x, y = _customers(g, bs)
        if fixed:
            x, y = prep(x, y)
            x, y = (x - mu) / sd, (y - ymu) / ysd
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
