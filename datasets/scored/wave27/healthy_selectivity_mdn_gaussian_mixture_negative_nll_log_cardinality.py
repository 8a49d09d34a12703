"""Healthy: mixture-density network for range-predicate selectivity (a learned cardinality
estimator that outputs a full distribution, useful for robust plan choice).  An MLP over the
predicate encoding (column one-hot, normalised lower/upper bounds) outputs K Gaussian
components (logits, means, log-stds) over the standardised log selectivity, trained with the
exact mixture negative log-likelihood written by hand (logsumexp over components), Adam.

Why it looks alarming but is fine: once the components become sharp the NLL of a continuous
density goes below zero (here to ~-0.3 .. -0.6) and keeps decreasing; the log-stds are
clamped to >= -4 so the density stays bounded, and the logsumexp keeps it finite.  A monitor
that treats a negative or "exploding downward" loss as divergence would flag it; the model is
learning.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Mixture density networks (Bishop 1994) for cardinality / selectivity estimation "
          "(e.g. 'Deep Mixture Density' estimators, DeepDB/Naru-style density models); "
          "negative continuous NLL is expected (PyTorch forum: 'negative loss with GaussianNLL')")


class SelectivityMDN(nn.Module):
    def __init__(self, n_in, hidden, k):
        super().__init__()
        self.k = k
        self.body = nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.out = nn.Linear(hidden, 3 * k)

    def forward(self, x):
        logit, mu, log_s = self.out(self.body(x)).chunk(3, -1)
        return logit, mu, log_s.clamp(min=-4.0)


def mixture_nll(out, y):
    logit, mu, log_s = out
    z = (y.unsqueeze(-1) - mu) / log_s.exp()
    comp = -0.5 * z ** 2 - log_s - 0.5 * math.log(2 * math.pi)
    return -(torch.logsumexp(torch.log_softmax(logit, -1) + comp, -1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 96, 128][seed % 3]
    k = [3, 4, 5][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = 250
    n_col = 6

    torch.manual_seed(seed)
    model = SelectivityMDN(n_col + 2, hidden, k)
    skew = torch.rand(n_col, generator=g) * 3 + 0.5
    batches = []
    for _ in range(steps):
        col = torch.randint(0, n_col, (bs,), generator=g)
        lo = torch.rand(bs, generator=g)
        hi = (lo + torch.rand(bs, generator=g) * (1 - lo)).clamp(max=1.0)
        x = torch.cat([nn.functional.one_hot(col, n_col).float(), lo.unsqueeze(1), hi.unsqueeze(1)], 1)
        s = skew[col]
        sel = (hi ** s - lo ** s).clamp_min(1e-6)
        # bimodal noise: histogram-bucket boundary effect
        y = (torch.log(sel) + 3.0) / 2.0 + 0.03 * torch.randn(bs, generator=g) \
            + 0.15 * (torch.rand(bs, generator=g) < 0.3).float()
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=mixture_nll, batches=batches, steps=steps)
