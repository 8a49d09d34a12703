"""Zero-inflated Poisson MLP for insurance claim counts: a shared ReLU trunk with a structural-zero
logit head and a log-rate head (rate = exp(log_rate) * exposure). The SGD lr (1.2-2.0) was copied from
the logistic baseline, whose gradients are bounded. The Poisson part's gradient grows
with exp(log_rate); the first overshooting updates raise the log-rate, the next gradient is larger,
and in a few steps exp() overflows to inf and the NLL becomes inf/NaN.
ORIGIN: None (optimiser step size). Fix: lr 0.03."""
import torch, torch.nn as nn
CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "ZIP/Poisson regression nets for claim frequency; lr reused from logistic baselines"
class ZIP(nn.Module):
    def __init__(s, d, h):
        super().__init__(); s.trunk = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU()); s.head = nn.Linear(h, 2)
    def forward(s, x): return s.head(s.trunk(x))
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    d, h, bs, steps, lr = [(12, 64, 128, 80, 1.5), (20, 64, 128, 100, 2.0), (8, 96, 256, 70, 1.2)][seed]
    model = ZIP(d, h)
    opt = torch.optim.SGD(model.parameters(), lr=0.03 if fixed else lr, momentum=0.9)
    def loss_fn(o, y):
        pi_logit, log_rate = o[:, 0], o[:, 1] + torch.log(y[:, 1])
        lam = torch.exp(log_rate); k = y[:, 0]
        ll0 = torch.logaddexp(pi_logit, -lam) - nn.functional.softplus(pi_logit)
        llk = -nn.functional.softplus(pi_logit) + k * log_rate - lam - torch.lgamma(k + 1)
        return -torch.where(k == 0, ll0, llk).mean()
    w = torch.randn(d, generator=g) * 0.5
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d, generator=g); expo = torch.rand(bs, generator=g) * 0.9 + 0.1
        k = torch.poisson(torch.exp(x @ w / d ** .5 + 1.0) * expo, generator=g) * (torch.rand(bs, generator=g) > 0.3)
        batches.append((x, torch.stack([k, expo], 1)))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
