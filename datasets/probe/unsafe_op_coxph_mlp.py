"""DeepSurv-style Cox proportional-hazards MLP.  The negative partial
log-likelihood is written naively: samples sorted by descending time, risk-set
denominator = log(cumsum(exp(risk))).  The survival times are an almost
deterministic function of the covariates, so the likelihood keeps rewarding
larger risk gaps; the risk scores grow steadily during an otherwise calm run
until exp(risk) overflows float32 (risk > ~88) and the loss becomes inf/NaN.
fixed=True: the same loss computed with torch.logcumsumexp (shift-safe).
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("DeepSurv / pycox / torchsurv user reports of NaN Cox loss: naive "
          "log(cumsum(exp(risk))) in the partial likelihood overflows once risk scores grow; "
          "fix = logcumsumexp (log-sum-exp trick)")

N_FEAT = 10
B = 64


class DeepSurv(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(N_FEAT, 64), nn.ReLU(),
            nn.Linear(64, 64), nn.ReLU(),
            nn.Linear(64, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _cox_loss(naive):
    def loss_fn(risk, target):
        time, event = target[:, 0], target[:, 1]
        order = torch.argsort(time, descending=True)
        risk, event = risk[order], event[order]
        if naive:
            log_risk_set = torch.log(torch.cumsum(torch.exp(risk), dim=0))
        else:
            log_risk_set = torch.logcumsumexp(risk, dim=0)
        return -((risk - log_risk_set) * event).sum() / event.sum().clamp_min(1.0)
    return loss_fn


def _data(seed, n):
    g = torch.Generator().manual_seed(77 + seed)
    x = torch.randn(n, N_FEAT, generator=g)
    beta = torch.randn(N_FEAT, generator=g)
    lin = x @ beta + 0.5 * torch.tanh(x[:, 0] * x[:, 1])
    # exponential-ish survival with tiny noise -> near-perfect ranking signal
    time = torch.exp(-lin + 0.02 * torch.randn(n, generator=g))
    censor = torch.exp(-lin + 1.5 + 0.5 * torch.randn(n, generator=g))
    event = (time <= censor).float()
    obs = torch.minimum(time, censor)
    return x, torch.stack([obs, event], dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    steps = 400
    x, y = _data(seed, steps * B)
    batches = [(x[i * B:(i + 1) * B], y[i * B:(i + 1) * B]) for i in range(steps)]
    model = DeepSurv()
    g = torch.Generator().manual_seed(seed)
    lr = 6e-3 + 3e-3 * torch.rand(1, generator=g).item()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=_cox_loss(naive=not fixed), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
