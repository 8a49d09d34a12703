"""d2l.ai "Predicting House Prices on Kaggle" MLP trained directly on d2l's log-RMSE, with a few
test-set rows (SalePrice filled with 0) leaked into one training batch.

Mechanism
---------
d2l concatenates train.csv and test.csv to standardise the features together.  This student also
concatenated the label column, did ``fillna(0)`` on everything (test rows have no SalePrice), and
split back with an off-by-a-few index, so a handful of test rows with SalePrice == 0 sit in one
training batch.  Following the chapter's exercise ("train on the log of the price") the model is
trained with d2l's ``log_rmse``: ``sqrt(mse(pred, log(labels)))``.  The run is perfectly calm
until the batch with the zero labels: ``log(0) = -inf``, the squared error is inf, the loss is
inf and the backward pass turns every gradient (and after the Adam step every weight) into NaN.

ORIGIN
------
None -- the failure comes from corrupt labels in one batch, not from a module.

Fix
---
fixed=True: the leaked rows are dropped from that batch (the correct train/test split); the
model, loss, optimizer and every other batch are identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("d2l.ai 5.7 Predicting House Prices on Kaggle (log_rmse, concatenated train/test "
          "preprocessing); Kaggle/d2l forum reports of 'loss becomes inf' from SalePrice=0 rows")


def log_rmse(preds, labels):
    # d2l: rmse = sqrt(loss(log(preds), log(labels))); here the net already predicts log-price
    return torch.sqrt(nn.functional.mse_loss(preds.squeeze(-1), torch.log(labels)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    d_in = [79, 120, 64][seed % 3]           # numeric + one-hot columns after get_dummies
    hidden = [64, 128, 32][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = [3e-3, 1e-3, 5e-3][seed % 3]
    bad_step = [41, 23, 57][seed % 3]
    n_bad = [3, 5, 2][seed % 3]
    steps = 80

    w_true = torch.randn(d_in, generator=g) * 0.08
    w_true[: d_in // 4] *= 3.0
    def sample(n):
        x = torch.randn(n, d_in, generator=g)                       # standardised features
        logp = 12.0 + x @ w_true * 0.5 + 0.1 * torch.randn(n, generator=g)
        return x, torch.exp(logp)                                   # SalePrice in dollars

    batches = []
    for t in range(steps):
        x, price = sample(bs)
        if t == bad_step and not fixed:
            xt, _ = sample(n_bad)                                   # leaked test.csv rows
            x = torch.cat([x, xt])
            price = torch.cat([price, torch.zeros(n_bad)])          # fillna(0) on SalePrice
        batches.append((x, price))

    model = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, 1))
    with torch.no_grad():
        model[2].bias.fill_(12.0)          # start at the mean log-price
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=0.0)
    return dict(model=model, optimizer=optimizer, loss_fn=log_rmse, batches=batches, steps=steps)
