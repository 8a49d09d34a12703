"""Deep Sets makespan regressor for two-machine flow-shop instances (a learned cost model used to
rank candidate job batches in a scheduler; cf. learned surrogates for scheduling in "Learning to
dispatch" / neural makespan predictors). Each instance is a set of jobs with processing times
(p1, p2) on the two machines; the target is the optimal makespan (Johnson's rule), a set
function, so phi -> sum-pool -> rho is the natural architecture.

Mechanism: the MES export gives processing times in raw seconds (60 .. 3600 s) and the makespan
target in seconds (~1e4 .. 4e4). Nothing is standardised: the first Linear sees inputs in the
thousands, sum-pooling over ~10 jobs multiplies that again, and the MSE at step 0 is ~1e8-1e9.
Gradients of that size make the first SGD+momentum step blow the weights up, and the loss goes
to inf/NaN within a few steps.

ORIGIN: "phi.0" -- the first Linear of the per-job encoder, where the raw-second features enter.

Fix (fixed=True): standardise the inputs (processing times divided by their hour scale, centred)
and z-score the makespan target with statistics of a calibration sample. Same model, optimiser
and learning rate.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "phi.0"
SOURCE = ("learned makespan / cost model fed raw second-valued processing times and makespans; "
          "classic 'loss is 1e9 then nan' regression report with unnormalised features+targets")


def johnson_makespan(p):
    first = sorted([j for j in range(len(p)) if p[j, 0] <= p[j, 1]], key=lambda j: p[j, 0])
    last = sorted([j for j in range(len(p)) if p[j, 0] > p[j, 1]], key=lambda j: -p[j, 1])
    t1 = t2 = 0.0
    for j in first + last:
        t1 += p[j, 0]
        t2 = max(t2, t1) + p[j, 1]
    return t2


class DeepSetsMakespan(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, jobs):
        return self.rho(self.phi(jobs).sum(dim=1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n_jobs = [10, 8, 12][seed % 3]
    hidden = [32, 48, 24][seed % 3]
    batch = [32, 48, 24][seed % 3]
    lr = [1e-3, 5e-4, 1e-3][seed % 3]
    steps = 150

    def sample(b):
        p = rng.uniform(60.0, 3600.0, size=(b, n_jobs, 2))
        y = np.array([johnson_makespan(p[i]) for i in range(b)])
        return p, y

    p_cal, y_cal = sample(256)
    mu_p, sd_p = p_cal.mean(), p_cal.std()
    mu_y, sd_y = y_cal.mean(), y_cal.std()

    batches = []
    for _ in range(steps):
        p, y = sample(batch)
        if fixed:
            p = (p - mu_p) / sd_p
            y = (y - mu_y) / sd_y
        batches.append((torch.tensor(p, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)))

    model = DeepSetsMakespan(hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
