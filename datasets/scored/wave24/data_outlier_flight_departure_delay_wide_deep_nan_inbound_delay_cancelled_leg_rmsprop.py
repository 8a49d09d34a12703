"""Departure-delay classifier (BTS On-Time Performance style): predict P(DEP_DELAY > 15 min)
from carrier / origin-airport / scheduled-hour embeddings plus numeric features, the key one
being the *inbound* leg's arrival delay of the same tail number (delay propagation), joined
from the previous row of the aircraft rotation. Wide&deep-style MLP, BCE-with-logits, RMSprop.

Mechanism: in the BTS extract ARR_DELAY (and TAXI_IN) are empty for cancelled or diverted
flights, so when the previous leg of a rotation was cancelled the joined inbound-delay
feature is NaN. On an ordinary day there are none in a batch, but the batches drawn from an
irregular-operations day (a thunderstorm ground stop, seed-dependent step) carry a few rows
with NaN inbound delay / taxi times. The NaN goes through the first Linear of the deep tower,
the logit and the loss of that step are NaN, and RMSprop writes NaN into every weight.

ORIGIN = "deep.0": the corrupt rows enter the network as input features, and deep.0 is the
first module that mixes them (its output is the first non-finite activation). The root cause
is the data, not that layer.

Fix: filter the batch -- drop rows whose numeric features are not finite (what
``df.dropna(subset=[...])`` before the join would have done). Same model, optimiser, steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "deep.0"
SOURCE = ("BTS Reporting Carrier On-Time Performance: ARR_DELAY/TAXI_IN blank for cancelled "
          "or diverted flights; Kaggle 2015 flight-delays notebooks hitting NaN loss after "
          "joining previous-leg delay by TAIL_NUM without dropna")

N_CARRIER, N_AIRPORT, N_HOUR = 12, 60, 24


class WideDeepDelay(nn.Module):
    def __init__(self, emb, hidden, n_num):
        super().__init__()
        self.carrier = nn.Embedding(N_CARRIER, emb)
        self.airport = nn.Embedding(N_AIRPORT, emb)
        self.hour = nn.Embedding(N_HOUR, emb)
        self.deep = nn.Sequential(nn.Linear(3 * emb + n_num, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden // 2), nn.ReLU(),
                                  nn.Linear(hidden // 2, 1))
        self.wide = nn.Linear(n_num, 1)

    def forward(self, cat, num):
        h = torch.cat([self.carrier(cat[:, 0]), self.airport(cat[:, 1]), self.hour(cat[:, 2]), num], 1)
        return (self.deep(h) + self.wide(num)).squeeze(1)


def _make(g, n, n_num):
    cat = torch.stack([torch.randint(0, N_CARRIER, (n,), generator=g),
                       torch.randint(0, N_AIRPORT, (n,), generator=g),
                       torch.randint(0, N_HOUR, (n,), generator=g)], 1)
    num = torch.randn(n, n_num, generator=g)          # standardised: inbound delay, taxi, load...
    c_eff = torch.linspace(-0.6, 0.6, N_CARRIER)[torch.randperm(N_CARRIER, generator=g)]
    a_eff = 0.5 * torch.randn(N_AIRPORT, generator=g)
    h_eff = 0.8 * torch.sin(torch.arange(N_HOUR).float() / 24 * 6.28 - 1.5)   # evening build-up
    logit = 1.5 * (1.6 * num[:, 0] + 0.5 * num[:, 1] - 0.3 * num[:, 2] + c_eff[cat[:, 0]]
             + a_eff[cat[:, 1]] + h_eff[cat[:, 2]])
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    return cat, num, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(3000 + seed)
    emb = [8, 16, 12][seed % 3]
    hidden = [64, 128, 96][seed % 3]
    bs = [128, 96, 160][seed % 3]
    lr = [1e-3, 5e-4, 2e-3][seed % 3]
    steps = 140
    n_num = 6
    bad_step = [37, 71, 104][seed % 3]
    torch.manual_seed(seed)
    model = WideDeepDelay(emb, hidden, n_num)
    cat, num, y = _make(g, steps * bs, n_num)
    batches = []
    for i in range(steps):
        c, x, t = cat[i * bs:(i + 1) * bs], num[i * bs:(i + 1) * bs].clone(), y[i * bs:(i + 1) * bs]
        if bad_step <= i < bad_step + 2:                 # ground-stop day: cancelled inbound legs
            k = int(torch.randint(2, 7, (1,), generator=g))
            rows = torch.randperm(bs, generator=g)[:k]
            x[rows, 0] = float("nan")                     # inbound ARR_DELAY blank
            x[rows, 1] = float("nan")                     # TAXI_IN blank
        if fixed:
            keep = torch.isfinite(x).all(1)
            c, x, t = c[keep], x[keep], t[keep]
        batches.append(((c, x), t))
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
