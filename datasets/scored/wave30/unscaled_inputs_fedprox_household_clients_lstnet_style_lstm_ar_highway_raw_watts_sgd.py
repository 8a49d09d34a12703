"""FedProx load forecasting across households, simulated as one model that sees each
household's batches in turn (a few local steps per client per round).  The forecaster is
LSTNet-style: an LSTM over the last 24 hourly readings plus a linear autoregressive "highway" on
the raw lags, predicting the next hour's consumption; the loss is MSE plus the FedProx proximal
term (mu / 2) * ||w - w_round_start||^2, which the model computes against the global weights it
snapshots at the start of every round.  Local optimiser: SGD with momentum.

Mechanism: the readings go in as the smart meters report them -- power in watts (hundreds to
several thousand) and outdoor temperature in degrees C -- and the target is the next hour's energy
in Wh, none of them standardised.  The MSE is ~1e6-1e7 at step 0, its gradient with respect to
the autoregressive weights is proportional to lag values of ~1e3, and the curvature along those
weights is ~sum of squared lags ~1e7-1e8, so with lr 5e-4-2e-3 every SGD step overshoots by
orders of magnitude: the prediction and the loss grow geometrically and reach inf/NaN within a
few steps (the same lr is fine for standardised data).

ORIGIN = "ar": the autoregressive Linear on the raw lags is the first module whose output and
gradient carry the unscaled magnitudes (the LSTM's gates merely saturate on them).

Fix: standardise inputs and target with the training-period mean and standard deviation (per
feature), the usual preprocessing; model, FedProx term, optimiser, client order and steps
unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "ar"
SOURCE = ("LSTNet (Lai et al. 2018) AR highway + RNN forecaster; FedProx (Li et al. 2020) proximal "
          "term; smart-meter data fed in raw watts/Wh without scaling (frequent 'loss is nan' "
          "reports for energy forecasting with SGD).")


class LSTNetLite(nn.Module):
    def __init__(self, n_feat, hidden, window, local_steps, mu):
        super().__init__()
        self.lstm = nn.LSTM(n_feat, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)
        self.ar = nn.Linear(window, 1)  # autoregressive highway on the load lags
        self.local_steps = local_steps
        self.mu = mu
        self._global = [p.detach().clone() for p in self.parameters()]
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        if self.training:
            if int(self.calls) % self.local_steps == 0:  # new round: server weights broadcast
                self._global = [p.detach().clone() for p in self.parameters()]
            self.calls += 1
        h, _ = self.lstm(x)
        pred = self.out(h[:, -1]).squeeze(-1) + self.ar(x[:, :, 0]).squeeze(-1)
        prox = sum(((p - g) ** 2).sum() for p, g in zip(self.parameters(), self._global))
        return pred, 0.5 * self.mu * prox


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2468 + seed)
    hidden = pick(1, [32, 48, 64])
    lr = pick(2, [1e-3, 5e-4, 2e-3])
    batch = pick(3, [32, 24, 48])
    n_clients = pick(4, [4, 6, 5])
    mu = pick(5, [0.01, 0.1, 0.05])
    local_steps = 5
    window = 24
    steps = 100

    model = LSTNetLite(2, hidden, window, local_steps, mu)

    # households: base load, daily profile amplitude, heating sensitivity
    base = 300 + 700 * torch.rand(n_clients, generator=g)
    amp = 200 + 800 * torch.rand(n_clients, generator=g)
    heat = 20 + 60 * torch.rand(n_clients, generator=g)

    def client_batch(k, n):
        t0 = torch.randint(0, 24 * 60, (n, 1), generator=g).float()
        t = t0 + torch.arange(window + 1).float()[None]
        temp = 8 + 7 * torch.sin(2 * math.pi * t / (24 * 365) + 1) - 4 * torch.cos(2 * math.pi * t / 24)
        temp = temp + torch.randn(n, window + 1, generator=g)
        watts = (base[k] + amp[k] * (0.5 + 0.5 * torch.sin(2 * math.pi * (t - 7) / 24)) ** 2
                 + heat[k] * (18 - temp).clamp_min(0) + 60 * torch.randn(n, window + 1, generator=g))
        x = torch.stack([watts[:, :window], temp[:, :window]], -1)
        y = watts[:, window]
        return x, y

    raw = []
    for s in range(steps):
        k = (s // local_steps) % n_clients
        raw.append(client_batch(k, batch))
    if fixed:
        xs = torch.cat([b[0] for b in raw]).reshape(-1, 2)
        ys = torch.cat([b[1] for b in raw])
        xm, xsd = xs.mean(0), xs.std(0)
        ym, ysd = ys.mean(), ys.std()
        batches = [((x - xm) / xsd, (y - ym) / ysd) for x, y in raw]
    else:
        batches = raw

    def loss_fn(out, y):
        pred, prox = out
        return F.mse_loss(pred, y) + prox

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
