"""Multi-task tabular model for motor-insurance pricing: a shared GELU trunk over standardised policy
features and three heads returned as a dict -- claim probability (logit, BCE), claim count (log-rate,
Poisson NLL) and log claim severity (Gaussian MSE). The three losses are summed and optimised with
SGD + Nesterov at lr=0.8, the rate the team used for its single-task logistic-regression baseline.
The summed multi-task gradient through a shared trunk is several times larger and far more curved
than the logistic one, so the first updates overshoot: the Poisson head's log-rate swings to huge
values, exp() overflows and the loss turns inf/NaN within the first handful of steps. Fix: lr=0.05 (same
optimiser, same model, same data)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Multi-task GLM-style insurance pricing networks (frequency/severity, e.g. CANN models of "
          "Schelldorfer & Wuthrich); known pattern of reusing a single-task SGD learning rate for a "
          "summed multi-task loss and diverging")


class PricingNet(nn.Module):
    def __init__(self, d_in, hidden=64):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.claim_head = nn.Linear(hidden, 1)
        self.count_head = nn.Linear(hidden, 1)
        self.severity_head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.trunk(x)
        return {"claim_logit": self.claim_head(h).squeeze(-1),
                "log_rate": self.count_head(h).squeeze(-1),
                "log_severity": self.severity_head(h).squeeze(-1)}


def multitask_loss(out, y):
    l_claim = F.binary_cross_entropy_with_logits(out["claim_logit"], y["claim"])
    l_count = F.poisson_nll_loss(out["log_rate"], y["count"], log_input=True)
    l_sev = F.mse_loss(out["log_severity"], y["log_severity"])
    return l_claim + l_count + l_sev


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in, n, bs, steps = 20, 8192, 256, 150
    X = torch.randn(n, d_in, generator=g)
    w_f = 0.4 * torch.randn(d_in, generator=g) / d_in ** 0.5
    w_s = 0.8 * torch.randn(d_in, generator=g) / d_in ** 0.5
    rate = torch.exp(-0.3 + X @ w_f + 0.3 * torch.tanh(X[:, 0] * X[:, 1]))
    count = torch.poisson(rate, generator=g)
    claim = (count > 0).float()
    log_sev = 0.5 + X @ w_s + 0.3 * torch.randn(n, generator=g)
    model = PricingNet(d_in)
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 0.8, momentum=0.9, nesterov=True)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n, (bs,), generator=g)
        batches.append((X[idx], {"claim": claim[idx], "count": count[idx], "log_severity": log_sev[idx]}))
    return dict(model=model, optimizer=opt, loss_fn=multitask_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
