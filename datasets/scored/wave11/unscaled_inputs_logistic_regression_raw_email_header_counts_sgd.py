"""Spam filter as plain logistic regression (one nn.Linear + BCE-with-logits, SGD lr 0.05) on hand-made
e-mail features fed in their raw units: message length in characters (hundreds to tens of
thousands), number of recipients, links, exclamation marks, digits, hour sent, fraction of capitals.
With nn.Linear's default init the length feature alone puts the logits anywhere from a few units to
hundreds (initial loss ~5-120 depending on the seed), after the first SGD step the loss is in the
tens of thousands, and the gradient w.r.t. the length weight is ~1e4 times that of the
capitals-fraction weight: every SGD step overshoots along the large-scale directions, the logits
swing between huge positive and huge negative and the loss never comes down (it stays finite:
BCE-with-logits is stable, so there is no NaN, just a loss that is worse than at the start). The
fixed run standardises each feature with the training-set mean/std before the same model and SGD.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "linear"
SOURCE = ("scikit-learn / CS229 advice to standardise features for gradient-descent logistic "
          "regression; Spambase-style raw count features (length, capitals, '!' counts)")


class LogReg(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear = nn.Linear(d, 1)

    def forward(self, x):
        return self.linear(x).squeeze(-1)


def _emails(g, n):
    spam = (torch.rand(n, generator=g) < 0.4).float()
    length = torch.exp(6.5 + 1.2 * torch.randn(n, generator=g) + 0.6 * spam)          # chars
    recips = torch.poisson(2.0 + 30.0 * spam * torch.rand(n, generator=g), generator=g) + 1
    links = torch.poisson(1.0 + 6.0 * spam, generator=g)
    excl = torch.poisson(0.5 + 4.0 * spam, generator=g)
    digits = torch.poisson(20.0 + 0.01 * length, generator=g)
    hour = torch.remainder(torch.round(13 + 5 * torch.randn(n, generator=g) + 8 * spam), 24)
    caps = (0.05 + 0.15 * spam + 0.05 * torch.rand(n, generator=g)).clamp(0, 1)
    x = torch.stack([length, recips, links, excl, digits, hour, caps], -1)
    return x, spam


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    x, y = _emails(g, 6000)
    if fixed:
        x = (x - x.mean(0)) / x.std(0)
    model = LogReg(x.shape[1])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps, B = 150, 128
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(y), (B,), generator=g)
        batches.append((x[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=F.binary_cross_entropy_with_logits,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
