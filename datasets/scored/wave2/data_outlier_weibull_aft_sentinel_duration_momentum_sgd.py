"""Weibull accelerated-failure-time survival MLP (customer churn): a small network predicts the
log-scale log(lambda(x)) and a global log-shape, trained with SGD+momentum on the censored Weibull
negative log-likelihood, whose (t/lambda)^k term grows like a power of the duration. In an
otherwise clean export, one mid-run batch contains a handful of still-active accounts whose tenure
field holds the legacy sentinel 99999 instead of a tenure in months. Their (t/lambda)^k terms are
~1e4-1e5 times a normal one, so that single step yields a gradient hundreds of times the usual
size; momentum carries it over the following steps, the scale head and shape are thrown far from
the data, and the loss jumps by orders of magnitude and never returns to its pre-outlier level
(no NaN). The fixed run only drops the sentinel rows from that batch."""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Known pattern: sentinel durations (9999/99999) in churn/survival exports; Weibull/AFT losses (pycox, WTTE-RNN issues) blowing up on a few huge durations; one outlier batch derailing a momentum-SGD run"


class WeibullAFT(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.scale_head = nn.Linear(d, 1)
        self.log_shape = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return {"log_scale": self.scale_head(self.body(x)).squeeze(-1), "log_shape": self.log_shape}


def weibull_nll(out, target):
    t, e = target[:, 0], target[:, 1]
    log_lam, log_k = out["log_scale"], out["log_shape"]
    k = log_k.exp()
    z = k * (torch.log(t) - log_lam)          # log (t/lambda)^k
    log_h = log_k - log_lam + (k - 1) * (torch.log(t) - log_lam)
    return (z.exp() - e * log_h).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = [10, 14, 8][seed % 3]
    width = [32, 24, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = [150, 200, 120][seed % 3]
    bad_step = [45, 70, 30][seed % 3]
    lr = 0.01
    beta = torch.randn(d_in, generator=g) * 0.6
    batches = []
    for s in range(steps):
        x = torch.randn(bs, d_in, generator=g)
        lam = torch.exp(1.0 + x @ beta)                            # months
        t = lam * (-torch.log(torch.rand(bs, generator=g))) ** (1 / 1.5)
        c = torch.rand(bs, generator=g) * 11.0 + 1.0             # administrative censoring
        time = torch.minimum(t, c).clamp_min(0.05)
        event = (t <= c).float()
        if s == bad_step:
            n_bad = [4, 3, 5][seed % 3]
            time[:n_bad] = 99999.0                                 # "still active" sentinel
            event[:n_bad] = 0.0
            if fixed:                                              # filter the corrupt rows
                x, time, event = x[n_bad:], time[n_bad:], event[n_bad:]
        batches.append((x, torch.stack([time, event], 1)))
    model = WeibullAFT(d_in, width, depth)
    with torch.no_grad():   # standard practice: start the scale head at the mean log-duration
        model.scale_head.bias.fill_(1.0)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=weibull_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
