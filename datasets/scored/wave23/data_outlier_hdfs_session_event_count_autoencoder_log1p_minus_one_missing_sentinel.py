"""Log anomaly detection - dense autoencoder over per-session log-event count
vectors (HDFS block sessions parsed into Drain templates), trained on
log1p-transformed counts with MSE; one shard of the training stream comes
from a parser run that wrote -1 for "template count unavailable".

Mechanism: the feature pipeline is ``np.log1p(counts)``.  Normal sessions
have counts >= 0, but one batch (its position varies with the seed) holds a
handful of sessions from a truncated log file where the join with the
template table emitted the sentinel -1.  ``log1p(-1) = -inf``, so that batch
carries -inf features; the forward pass turns them into inf/NaN and the
reconstruction loss is non-finite at that step, after a calm run before it.

ORIGIN: ``encoder.0`` - the first Linear, the first module the corrupt
-inf inputs reach (the fault is in the data, not in any layer).

Fix: clean the batch before the transform - the sentinel is treated as a
missing count (clipped to 0) so log1p stays finite; model, optimiser and all
other batches are unchanged.
"""
import random

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("Loghub HDFS event-count-matrix anomaly detection (Xu et al. 2009; He et al. 'Loglizer' "
          "2016) with deep autoencoders; -1 'missing' sentinels passed through np.log1p giving -inf "
          "features (pandas/numpy 'RuntimeWarning: divide by zero encountered in log1p' reports)")

N_TPL = 48   # Drain templates


class CountAE(nn.Module):
    def __init__(self, hidden, code):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(N_TPL, hidden), nn.ReLU(),
                                     nn.Linear(hidden, code), nn.ReLU())
        self.decoder = nn.Sequential(nn.Linear(code, hidden), nn.ReLU(),
                                     nn.Linear(hidden, N_TPL))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def _sessions(g, n, rates, mix):
    # each block session follows one of a few workflows (write/replicate/delete ...)
    k = torch.randint(0, rates.shape[0], (n,), generator=g)
    lam = rates[k] * (0.5 + torch.rand(n, 1, generator=g))
    counts = torch.poisson(lam @ mix, generator=g)
    return counts


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    hidden = r.choice([64, 96, 128])
    code = r.choice([8, 12, 16])
    lr = r.choice([1e-3, 2e-3, 3e-3])
    bs = r.choice([64, 128])
    steps = r.choice([100, 120, 150])
    bad_step = r.randint(int(0.3 * steps), int(0.7 * steps))
    n_bad = r.choice([1, 3, 6])

    g = torch.Generator().manual_seed(3000 + seed)
    rates = torch.rand(6, 12, generator=g) * 4
    mix = (torch.rand(12, N_TPL, generator=g) < 0.25).float()
    batches = []
    for t in range(steps):
        c = _sessions(g, bs, rates, mix)
        if t == bad_step:       # truncated log file: template join emitted -1 sentinels
            rows = torch.randperm(bs, generator=g)[:n_bad]
            cols = torch.randperm(N_TPL, generator=g)[:10]
            c[rows.unsqueeze(1), cols] = -1.0
        if fixed:
            c = c.clamp_min(0.0)          # sentinel -> missing -> 0 before the log transform
        x = torch.log1p(c)
        batches.append((x, x.clone()))

    torch.manual_seed(seed)
    model = CountAE(hidden, code)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
