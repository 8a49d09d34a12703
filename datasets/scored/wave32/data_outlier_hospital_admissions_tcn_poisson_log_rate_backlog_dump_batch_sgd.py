"""Next-day hospital-admission forecaster: dilated causal Conv1d (TCN) with a Poisson log-rate head (SGD).

Mechanism: the model reads 28 days of (log1p admissions, test positivity, mobility index) per
facility and outputs the log expected admissions for the next day; the loss is
``PoissonNLLLoss(log_input=True)`` on raw counts (5-60 a day). One training batch comes from a
reporting day on which a state dumped a three-month backlog of admissions into a single date
(counts ~1e4-5e4 instead of tens), a known artefact of HHS/NHSN hospital feeds. The Poisson
gradient w.r.t. the log-rate is exp(eta) - y ~ -3e4, so that one SGD step pushes the head's log
rate up by tens of nats; on the next batch exp(eta) overflows and the loss becomes inf/NaN. The
step at which the dump appears varies with the seed.

ORIGIN: "head", the Linear producing the log-rate: the corrupt target enters the loss through it
and its bias/weights take the first catastrophic update. (The corruption itself is in the data.)

Fix: filter the batch: rows whose target is more than 3x the facility's 28-day maximum are
treated as a backlog artefact and dropped from their batch (everything else unchanged).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "head"
SOURCE = ("CDC/HHS hospital-capacity data notes on backlogged admissions reported on one date; "
          "Reich lab COVID-19 Forecast Hub data-anomaly reports (reporting dumps causing spikes)")


class CausalConv(nn.Module):
    def __init__(self, cin, cout, dil):
        super().__init__()
        self.pad = 2 * dil
        self.conv = nn.Conv1d(cin, cout, 3, dilation=dil)

    def forward(self, x):
        return self.conv(nn.functional.pad(x, (self.pad, 0)))


class AdmissionsTCN(nn.Module):
    def __init__(self, ch, n_blocks):
        super().__init__()
        self.inp = nn.Conv1d(3, ch, 1)
        self.blocks = nn.ModuleList(CausalConv(ch, ch, 2 ** i) for i in range(n_blocks))
        self.act = nn.ReLU()
        self.head = nn.Linear(ch, 1)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = h + self.act(b(h))
        return self.head(h[:, :, -1]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ch = [32, 24, 48][seed % 3]
    n_blocks = [3, 4, 3][seed % 3]
    lr = [2e-4, 3e-4, 1.5e-4][seed % 3]
    bs = [32, 48, 40][seed % 3]
    steps = 120
    bad_step = [37, 58, 81][seed % 3]
    T = 29
    N = steps * bs
    base = torch.exp(torch.rand(N, 1, generator=g) * 2.0 + 1.5)            # 4.5 - 33 per day
    growth = 0.03 * torch.randn(N, 1, generator=g)
    t = torch.arange(T).float().unsqueeze(0)
    rate = base * torch.exp(growth * t + 0.15 * torch.sin(2 * torch.pi * t / 7))
    counts = torch.poisson(rate, generator=g)
    pos = torch.sigmoid(torch.log(rate / 20.0) + 0.1 * torch.randn(N, T, generator=g))
    mob = 0.5 * torch.randn(N, T, generator=g)
    X = torch.stack([torch.log1p(counts[:, :-1]), pos[:, :-1], mob[:, :-1]], 1)
    X[:, 0] = (X[:, 0] - 2.5) / 1.0
    Y = counts[:, -1].clone()
    # backlog dump: one reporting batch carries months of admissions on a single date
    sl = slice(bad_step * bs, (bad_step + 1) * bs)
    dump = torch.randint(bs // 3, bs, (1,), generator=g).item()
    Y[sl][:dump] = Y[sl][:dump] * 0 + torch.randint(10000, 50000, (dump,), generator=g).float()
    keep = torch.ones(N, dtype=torch.bool)
    if fixed:
        bound = 3.0 * counts[:, :-1].max(1).values.clamp_min(1.0)
        keep = Y <= bound

    model = AdmissionsTCN(ch, n_blocks)
    with torch.no_grad():  # start the log-rate at the typical facility level
        model.head.bias.fill_(float(torch.log(counts[:, -1].mean())))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.PoissonNLLLoss(log_input=True, full=True)
    batches = []
    for i in range(steps):
        k = keep[i * bs:(i + 1) * bs]
        batches.append((X[i * bs:(i + 1) * bs][k], Y[i * bs:(i + 1) * bs][k]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
