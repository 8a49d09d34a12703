"""Zero-inflated lognormal (ZILN) customer-LTV network trained with a classifier's SGD lr.

Mechanism: the ZILN head (Wang, Liu & Miao 2019, Google's "lifetime value" model) outputs,
per customer, a purchase logit p, a log-scale mean mu and a scale sigma = softplus(s)
(floored at sqrt(1e-7) as in the reference code).  The loss is BCE on "purchased" plus, for
buyers, the lognormal negative log-likelihood log(y * sigma * sqrt(2 pi)) +
(log y - mu)**2 / (2 sigma**2).  The DNN (embeddings of categorical columns + an MLP) is
trained with SGD + momentum at lr 0.05-0.1, the value used for the purchase classifier it
grew out of.  At initialisation mu ~ 0 while log(y) ~ 3.5, so the NLL gradient (scaled by
1/sigma**2) is large, and the first steps have update/weight ratios of 5-20 instead of ~1e-3:
mu and sigma are thrown to tens (or, on some seeds, to ~1e6), where the NLL is flat in both.
The run then crawls or sits still at a loss no lower than its early values (sometimes 3x
higher), while the same model with a 10x smaller lr descends steadily.

ORIGIN is None: the instability is the optimiser step size; no single module is faulty.

Fix: lr / 10 (same SGD + momentum); nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("ZILN loss for customer lifetime value (Wang, Liu & Miao 2019, "
          "google/lifetime_value); NaN losses reported when the regression head is trained "
          "with the step size of a classification model.")


class ZILNNet(nn.Module):
    def __init__(self, cards, n_num, k, hidden):
        super().__init__()
        self.register_buffer("offsets", torch.cumsum(torch.tensor([0] + cards[:-1]), 0))
        self.emb = nn.Embedding(sum(cards), k)
        layers, d = [], len(cards) * k + n_num
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, 3))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x_cat, x_num):
        e = self.emb(x_cat + self.offsets).flatten(1)
        return self.mlp(torch.cat([e, x_num], 1))


def ziln_loss(out, y):
    p_logit, mu, s = out[:, 0], out[:, 1], out[:, 2]
    buyer = (y > 0).float()
    cls = F.binary_cross_entropy_with_logits(p_logit, buyer)
    sigma = torch.clamp(F.softplus(s), min=math.sqrt(1e-7))
    safe_y = torch.where(y > 0, y, torch.ones_like(y))
    nll = torch.log(safe_y * sigma * math.sqrt(2 * math.pi)) + \
        (torch.log(safe_y) - mu) ** 2 / (2 * sigma ** 2)
    return cls + (buyer * nll).sum() / buyer.sum().clamp_min(1.0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1600 + seed)
    cards = [[30, 8, 12, 5], [50, 6, 10, 4, 7], [20, 9, 15]][seed]
    n_num = [4, 6, 3][seed]
    k = [8, 12, 8][seed]
    hidden = [[64, 32], [96, 48], [64]][seed]
    bs = [256, 192, 320][seed]
    steps = [150, 160, 140][seed]
    lr = [0.05, 0.08, 0.1][seed]
    if fixed:
        lr = lr / 10

    n = bs * steps
    x_cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in cards], 1)
    x_num = torch.randn(n, n_num, generator=g)
    eff_p = [torch.randn(c, generator=g) for c in cards]
    eff_v = [torch.randn(c, generator=g) * 0.5 for c in cards]
    sp = sum(e[x_cat[:, j]] for j, e in enumerate(eff_p)) / len(cards) ** 0.5 + 0.8 * x_num[:, 0] - 0.5
    mv = 3.5 + sum(e[x_cat[:, j]] for j, e in enumerate(eff_v)) + 0.4 * x_num[:, 1]
    buy = torch.rand(n, generator=g) < torch.sigmoid(sp)
    value = torch.exp(mv + 0.6 * torch.randn(n, generator=g))            # dollars
    y = torch.where(buy, value, torch.zeros_like(value))
    batches = [((x_cat[i * bs:(i + 1) * bs], x_num[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs])
               for i in range(steps)]

    model = ZILNNet(cards, n_num, k, hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=optimizer, loss_fn=ziln_loss, batches=batches, steps=steps)
