"""DeepSurv-style Cox proportional-hazards model for equipment failure: an MLP maps 14 standardised
sensor/usage features to a log-risk score and is trained on the negative Cox partial log-likelihood
(risk sets via a numerically stable logcumsumexp over time-sorted batches).  The learning rate
(SGD, Nesterov momentum 0.9) was set to 1.0, a value copied from a linear Cox baseline that used
per-sample-summed losses.  Each step overshoots the curvature of the partial likelihood by a wide
margin: the log-risk scores are scaled up step after step, the ranking inside each risk set flips
back and forth, and the loss climbs instead of falling until the scores overflow the
log-sum-exp.  With lr = 0.02 the same model, data and optimiser train normally.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Katzman et al. 2018 'DeepSurv' (Cox partial likelihood MLP, SGD with Nesterov momentum); "
          "generic lr-too-high divergence")

N_FEAT = 14


class DeepSurv(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_FEAT, 48), nn.SELU(), nn.Linear(48, 48), nn.SELU(),
                                 nn.Linear(48, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def cox_nll(log_risk, y):
    t, event = y                               # batch already sorted by descending time
    log_cum = torch.logcumsumexp(log_risk, dim=0)
    return -((log_risk - log_cum) * event).sum() / event.sum().clamp_min(1.0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(N_FEAT, generator=g) / math.sqrt(N_FEAT)
    steps, bs = 150, 128
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, N_FEAT, generator=g)
        risk = 4.0 * (x @ w + 0.5 * x[:, 0] * x[:, 1])
        t = -torch.log(torch.rand(bs, generator=g)) / torch.exp(risk)
        c = -torch.log(torch.rand(bs, generator=g)) * 2.0
        time, event = torch.minimum(t, c), (t <= c).float()
        order = torch.argsort(time, descending=True)
        batches.append((x[order], (time[order], event[order])))
    model = DeepSurv()
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else 1.0, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=cox_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
