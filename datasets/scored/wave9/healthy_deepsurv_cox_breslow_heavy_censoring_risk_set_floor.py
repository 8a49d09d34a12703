"""DeepSurv-style Cox proportional-hazards network (Katzman et al. 2018) on a heavily censored
registry (~50% censored, event times discretised to months, so ties are common): an MLP outputs a
log-risk per patient and the loss is the negative Cox partial log-likelihood with the Breslow
treatment of ties, computed stably with logcumsumexp over the risk sets of each batch and averaged
over the events. Things that look alarming but are normal: the loss starts around 4 (it contains
log of the risk-set size, so its floor is far above 0 and depends on the batch size), only half
of the rows in a batch contribute a term, the per-batch value jumps with which patients happen to
be in the batch, and the log-risk outputs are unbounded (no normalisation, only their differences
matter). Training is healthy: the partial likelihood falls steadily as the risk ranking is learned."""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Katzman et al. 2018 'DeepSurv'; Breslow partial likelihood as in pycox CoxPH / lifelines"

N_COV, STEPS, BATCH = 16, 150, 128


class DeepSurv(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_COV, 64), nn.SELU(), nn.Dropout(0.1),
                                 nn.Linear(64, 32), nn.SELU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _registry(g, n, w):
    x = torch.randn(n, N_COV, generator=g)
    risk = 4.0 * (x @ w) + 0.8 * x[:, 0] * x[:, 1]
    t = torch.ceil(-torch.log(torch.rand(n, generator=g)) * torch.exp(-risk) * 24.0)       # months
    c = torch.ceil(torch.rand(n, generator=g) * 40.0)
    event = (t <= c).float()
    time = torch.minimum(t, c)
    return x, time, event


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(18000 + seed)
    model = DeepSurv()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4, weight_decay=1e-4)
    w = torch.randn(N_COV, generator=g) / N_COV ** 0.5
    x, time, event = _registry(g, 40 * BATCH, w)
    batches = []
    for i in range(STEPS):
        j = i % 40
        sl = slice(j * BATCH, (j + 1) * BATCH)
        batches.append((x[sl], (time[sl], event[sl])))

    def loss_fn(log_risk, target):
        time, event = target
        order = torch.argsort(time, descending=True)
        lr_, t_, e_ = log_risk[order], time[order], event[order]
        lse = torch.logcumsumexp(lr_, 0)
        # Breslow ties: every tied event uses the risk set of all patients with time >= t
        last_of_tie = torch.searchsorted(-t_, -t_, right=True) - 1
        lse = lse[last_of_tie]
        return -((lr_ - lse) * e_).sum() / e_.sum().clamp_min(1.0)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
