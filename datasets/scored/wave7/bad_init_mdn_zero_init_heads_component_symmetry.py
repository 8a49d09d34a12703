"""Mixture density network (Bishop 1994) for a multi-valued inverse problem: given a measured
response x, predict the distribution of the design parameter y, which is bimodal (+/- branch of the
inverse). The trunk is a small tanh MLP; three heads give mixture logits, K=5 component means and
log-scales, returned as a dict and trained with the mixture negative log-likelihood. Following the
"zero-init the output layer for a stable start" advice, ALL three heads were initialised to zero.
For a mixture that is fatal: every component starts with the same mean, scale and weight, so the
responsibilities are equal and every component receives exactly the same gradient at every step;
the K components move as one and the model stays a single Gaussian, whose best fit to the
symmetric bimodal target is the standardised N(0, 1) it starts from. The NLL plateaus. Fix: default
(random) init for the heads, which breaks the symmetry between components."""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "mean_head"
SOURCE = ("Bishop 1994 'Mixture Density Networks'; known pitfall that identical component "
          "initialisation (e.g. zero-initialised output heads) never breaks the symmetry between "
          "mixture components (same issue as the classic all-equal weight init)")

K = 5


class MDN(nn.Module):
    def __init__(self, d_in=1, hidden=48, zero_heads=True):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.logit_head = nn.Linear(hidden, K)
        self.mean_head = nn.Linear(hidden, K)
        self.logscale_head = nn.Linear(hidden, K)
        if zero_heads:
            for head in (self.logit_head, self.mean_head, self.logscale_head):
                nn.init.zeros_(head.weight)
                nn.init.zeros_(head.bias)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        h = torch.tanh(self.fc2(h))
        return {"logits": self.logit_head(h), "mean": self.mean_head(h),
                "log_scale": self.logscale_head(h)}


def mixture_nll(out, y):
    y = y.unsqueeze(-1)
    log_pi = torch.log_softmax(out["logits"], dim=-1)
    z = (y - out["mean"]) * torch.exp(-out["log_scale"])
    log_n = -0.5 * z ** 2 - out["log_scale"] - 0.5 * math.log(2 * math.pi)
    return -torch.logsumexp(log_pi + log_n, dim=-1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n, bs, steps = 8192, 256, 250
    x = 2 * torch.rand(n, 1, generator=g) - 1
    branch = torch.randint(0, 2, (n, 1), generator=g).float() * 2 - 1
    y = branch * (1.0 + 0.2 * torch.sin(3 * x)) + 0.1 * torch.randn(n, 1, generator=g)
    y = ((y - y.mean()) / y.std()).squeeze(-1)
    model = MDN(zero_heads=not fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n, (bs,), generator=g)
        batches.append((x[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=mixture_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
