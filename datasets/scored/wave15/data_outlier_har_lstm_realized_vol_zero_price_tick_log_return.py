"""HAR-LSTM volatility forecaster: an LSTM over daily log returns plus HAR realised-variance
components (daily / weekly / monthly), predicting next-day log variance; trained with the
Gaussian negative log-likelihood of the next return (the loss is negative when fitted well).

Mechanism: prices come from a tick file; in one window a bad print of 0.0 (exchange
"no trade" placeholder) survived cleaning.  Features are computed in the data pipeline as
log(p_t / p_{t-1}), so that batch carries +inf/-inf returns (and inf realised variance); the
first forward pass on it yields NaN in the LSTM, the loss and every gradient, and the weights
become NaN.  The rest of the data is fine.

ORIGIN: None - the corrupt batch, not a module, is the cause.
Fix: the zero tick is forward-filled before computing returns (the batch is clean).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Corsi HAR-RV + LSTM volatility forecasting (e.g. Bucci 2020); zero/placeholder ticks producing inf log returns in market data pipelines"


class HARLSTM(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.lstm = nn.LSTM(4, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(h[:, -1]).squeeze(-1)  # predicted log variance of next return


def gaussian_nll(log_var, r):
    return 0.5 * (log_var + r ** 2 / log_var.exp()).mean()


def _features(prices, L):
    r = torch.log(prices[:, 1:] / prices[:, :-1])  # (B, n)
    rv = r ** 2 * 1e4  # daily realised variance proxy in bp^2 / 100
    d = rv[:, -L - 1:-1]
    w = torch.stack([rv[:, t - 5:t].mean(1) for t in range(rv.shape[1] - L - 1, rv.shape[1] - 1)], 1)
    m = torch.stack([rv[:, t - 22:t].mean(1) for t in range(rv.shape[1] - L - 1, rv.shape[1] - 1)], 1)
    x = torch.stack([r[:, -L - 1:-1] * 100, d, w, m], -1)
    return x, r[:, -1]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=16, bs=32, L=20, lr=3e-3, bad=35), dict(h=24, bs=48, L=15, lr=2e-3, bad=60), dict(h=12, bs=24, L=25, lr=5e-3, bad=22)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    model = HARLSTM(cfg["h"])
    steps = 80
    n = cfg["L"] + 24
    batches = []
    for s in range(steps):
        B = cfg["bs"]
        # GARCH(1,1)-like returns
        sig2 = torch.full((B,), 1e-4)
        rets = []
        for t in range(n):
            z = torch.randn(B, generator=g)
            r = sig2.sqrt() * z
            rets.append(r)
            sig2 = 2e-6 + 0.1 * r ** 2 + 0.88 * sig2
        rets = torch.stack(rets, 1)
        prices = 100 * torch.exp(torch.cumsum(rets, 1))
        prices = torch.cat([torch.full((B, 1), 100.0), prices], 1)
        if s == cfg["bad"]:
            j = n - 7
            if fixed:
                prices[3, j] = prices[3, j - 1]  # forward-fill the bad tick
            else:
                prices[3, j] = 0.0  # "no trade" placeholder print left in the data
        x, y = _features(prices, cfg["L"])
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=gaussian_nll, batches=batches, steps=steps)
