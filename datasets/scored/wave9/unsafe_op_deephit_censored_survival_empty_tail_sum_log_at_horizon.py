"""DeepHit-style discrete-time survival model (Lee et al. 2018, single risk): an MLP maps patient
covariates to a softmax over 20 time bins (the event-time pmf). The likelihood uses -log pmf[t] for
observed events and -log S(t) for right-censored patients, where S(t) = sum_{k > t} pmf[k] is built
from a reversed cumulative sum shifted by one bin. Training is calm for most of the run because
censoring times fall before the last bin. A mid-run batch comes from the end-of-study extract, where
patients still event-free at the administrative horizon are censored IN the last bin: for them the
sum over bins after t is an empty sum, exactly 0, and log(0) = -inf makes the loss +inf at that step.
The fix is the usual epsilon: log(S.clamp_min(1e-7)); model, data and optimiser are unchanged."""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = "Lee et al. 2018 'DeepHit'; pycox/DeepHit re-implementations computing log survival without epsilon for administratively censored rows"

N_COV, N_BINS, STEPS, BATCH, BAD_STEP = 12, 20, 150, 256, 80


class DeepHit(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_COV, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                 nn.Linear(64, N_BINS))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)            # pmf over time bins


def _cohort(g, n, w, end_of_study):
    x = torch.randn(n, N_COV, generator=g)
    scale = 8.0 * torch.exp(-0.6 * (x @ w))
    t_event = (scale * (-torch.log(torch.rand(n, generator=g))) ** (1 / 5)).long()   # Weibull, shape 5
    t_event = t_event.clamp(max=N_BINS - 1)
    t_cens = torch.randint(3, N_BINS - 1, (n,), generator=g)        # loss to follow-up
    event = t_event <= t_cens
    t = torch.minimum(t_event, t_cens)
    if end_of_study:   # still event-free at the administrative horizon: censored in the last bin
        admin = torch.rand(n, generator=g) < 0.2
        t = torch.where(admin, torch.full_like(t, N_BINS - 1), t)
        event = event & ~admin
    return x, t, event.float()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(16000 + seed)
    model = DeepHit()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = []
    w = torch.randn(N_COV, generator=g) / N_COV ** 0.5
    pool = [_cohort(g, BATCH, w, False) for _ in range(40)]
    for i in range(STEPS):
        if i == BAD_STEP:
            x, t, e = _cohort(g, BATCH, w, True)
        else:
            x, t, e = pool[i % 40]
        batches.append((x, (t, e)))

    def loss_fn(pmf, target):
        t, e = target
        s_incl = torch.flip(torch.cumsum(torch.flip(pmf, [1]), 1), [1])           # sum_{k >= t}
        surv = torch.cat([s_incl[:, 1:], torch.zeros_like(s_incl[:, :1])], 1)  # sum_{k > t}
        p_t = pmf.gather(1, t.unsqueeze(1)).squeeze(1)
        s_t = surv.gather(1, t.unsqueeze(1)).squeeze(1)
        if fixed:
            p_t, s_t = p_t.clamp_min(1e-7), s_t.clamp_min(1e-7)
        nll = -(e * torch.log(p_t) + (1 - e) * torch.log(s_t))
        return nll.mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
