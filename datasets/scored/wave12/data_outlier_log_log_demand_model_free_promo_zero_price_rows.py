"""Neural log-log demand / price-elasticity model for retail SKU-store-weeks: a feature trunk
(store, season, promo, competitor features) and a price branch that reads log(price) are mixed
into a head that predicts log1p(units sold), trained with MSE and SGD + Nesterov momentum.  The
log-price column is computed in the feature pipeline as torch.log(shelf_price).  In one weekly
extract that arrives mid-run, three rows are 'free with loyalty coupon' promotions whose shelf
price was recorded as 0.00, so their log-price is -inf.  The price branch squashes its
pre-activation with tanh, so the forward pass and the loss of that step still look normal
(tanh(+-inf) = +-1), but the weight gradient of price_proj is 0 * (-inf) = NaN; the optimiser
writes the NaN into price_proj and, through momentum, everything downstream, and the loss is NaN
from the next step on.  Fixed: the same run with the zero-price rows
dropped from that batch (price > 0 filter), nothing else changed."""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "price_proj"
SOURCE = ("Log-log price elasticity regressions on retail scanner data where free/100%-coupon "
          "promotions are stored with price 0 and np.log(price) yields -inf; the classic "
          "'loss becomes nan after N iterations' report traced to a -inf feature")


class DemandNet(nn.Module):
    def __init__(self, n_feat, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU())
        self.price_proj = nn.Linear(1, hidden)
        self.mix = nn.Linear(2 * hidden, hidden)
        self.act = nn.ReLU()
        self.head = nn.Linear(hidden, 1)

    def forward(self, feats, log_price):
        h = self.trunk(feats)
        p = torch.tanh(self.price_proj(log_price))
        z = self.act(self.mix(torch.cat([h, p], dim=-1)))
        return self.head(z).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_feat, bs, steps, bad_step = 12, 96, 160, 90
    w_base = torch.randn(n_feat, generator=g) * 0.3
    w_el = torch.randn(n_feat, generator=g) * 0.1

    def sample(n):
        f = torch.randn(n, n_feat, generator=g)
        price = torch.exp(torch.randn(n, generator=g) * 0.35 + 1.2)          # ~ 2..6 dollars
        elast = -1.6 + f @ w_el
        log_mu = 2.5 + f @ w_base + elast * (torch.log(price) - 1.2)
        units = torch.poisson(torch.exp(log_mu.clamp(max=6.0)), generator=g)
        return f, price, torch.log1p(units)

    batches = []
    for s in range(steps):
        f, price, y = sample(bs)
        if s == bad_step:
            price[[5, 41, 77]] = 0.0            # 'free with coupon' rows recorded at price 0.00
            if fixed:
                keep = price > 0
                f, price, y = f[keep], price[keep], y[keep]
        log_price = torch.log(price).unsqueeze(-1)   # feature pipeline: -inf for price 0
        batches.append(((f, log_price), y))

    model = DemandNet(n_feat)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)
    mse = nn.MSELoss()

    def loss_fn(out, target):
        return mse(out, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
