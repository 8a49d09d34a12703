"""Employee-attrition time-to-event model (WTTE-style): an MLP maps an employee's features
(grade, pay ratio to band midpoint, manager changes, engagement score, commute, ...) to the
Weibull scale alpha and shape beta of their tenure distribution; the loss is the hand-written
censored Weibull negative log-likelihood on tenure in months (event = left the company,
censored = still employed), Adam.

Mechanism: the log-likelihood of an observed exit contains (beta - 1) * log(t) (written as
log(t) - log(alpha)). The HRIS extract also contains "no-show" hires -- people who accepted an
offer and never started, recorded with start date == termination date, i.e. an observed
event with tenure exactly 0. Training is calm until the first batch that holds such a row
(its step varies with the seed); there torch.log(0) = -inf, (beta - 1) * -inf is +-inf and the
batch loss is inf / NaN. Nothing is wrong with the model or the scale of the data; the op is
simply not safe at its boundary.

ORIGIN: "net.4", the Linear producing (log alpha, log beta): the unsafe log-likelihood is
computed functionally from its output, so the last module before the failing op is named.

Fix: the usual epsilon -- clamp tenure to >= 1 day (1/30 month) inside the log-likelihood
(the discrete-time "survived part of the first day" convention); everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "net.4"
SOURCE = ("WTTE-RNN Weibull time-to-event loss (Martinsson 2016; its implementation adds an "
          "epsilon to y before the log); HR attrition survival models on HRIS extracts with "
          "zero-length 'no-show' tenures; log(0) in hand-written likelihoods")


class WeibullAttrition(nn.Module):
    def __init__(self, d, hid):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(),
                                 nn.Linear(hid, 2))

    def forward(self, x):
        p = self.net(x)
        log_alpha = p[:, 0] + 3.0                  # ~20 months median tenure at init
        beta = torch.nn.functional.softplus(p[:, 1]) + 0.3
        return torch.stack([log_alpha, beta], 1)


def make_loss(eps):
    def weibull_nll(out, tgt):
        log_alpha, beta = out[:, 0], out[:, 1]
        t, event = tgt[:, 0], tgt[:, 1]
        if eps is not None:
            t = t.clamp_min(eps)
        log_t = torch.log(t)
        z = log_t - log_alpha
        cum_haz = torch.exp(beta * z)                               # (t / alpha) ** beta
        log_pdf = torch.log(beta) - log_alpha + (beta - 1) * z - cum_haz
        ll = event * log_pdf + (1 - event) * (-cum_haz)
        return -ll.mean()
    return weibull_nll


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d, steps = 12, 150
    hid = [32, 64, 48][seed % 3]
    bs = [128, 96, 160][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    first_no_show = 25 + (53 * seed) % 100
    torch.manual_seed(seed)
    model = WeibullAttrition(d, hid)
    w = torch.randn(d, generator=g) * 0.6
    batches = []
    for step in range(steps):
        x = torch.randn(bs, d, generator=g)
        alpha = torch.exp(3.0 + x @ w)
        k = 2.0
        u = torch.rand(bs, generator=g).clamp(1e-6, 1 - 1e-6)
        t_exit = alpha * (-torch.log(u)) ** (1 / k)
        t_cens = 60.0 * torch.rand(bs, generator=g)                # extract date
        t = torch.minimum(t_exit, t_cens)
        event = (t_exit <= t_cens).float()
        t = torch.ceil(t * 30.0) / 30.0                            # whole days, in months
        if step >= first_no_show and step % 4 == first_no_show % 4:
            i = int(torch.randint(0, bs, (1,), generator=g))
            t[i], event[i] = 0.0, 1.0                              # no-show hire
        batches.append((x, torch.stack([t, event], 1)))
    return dict(model=model, optimizer=torch.optim.Adam(model.parameters(), lr=lr),
                loss_fn=make_loss(1.0 / 30.0 if fixed else None), batches=batches, steps=steps)
