"""Nightly moth light-trap counts from the preceding fortnight of weather with a GRU and a
Poisson log-link head; plain SGD at the lr of the team's Gaussian (log-count MSE) model.

Mechanism: an insect-monitoring network (Rothamsted-style light traps) forecasts the catch of
a pest moth per trap-night from 14 nights of weather (temperature, minimum temperature,
wind, rain, moonlight, humidity) with a 1-layer GRU and a linear head giving the log rate;
the loss is ``PoissonNLLLoss(log_input=True)``.  The lr (0.2-0.5) was tuned for the earlier
model that regressed standardised log(count+1) with MSE, whose gradients are O(1).  The
Poisson gradient w.r.t. the log rate is exp(eta) - y, i.e. of the order of the counts
themselves (tens to hundreds of moths): the first SGD step moves the head by tens of units,
exp(eta) jumps by orders of magnitude, the next gradient is larger still, and within a few
steps exp(eta) overflows to inf and the loss becomes inf/NaN.

ORIGIN: None -- the step size is global; it is not a module that starts it.

Fix: lr 2e-3 (what this loss's gradient scale needs); model, loss, data and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Rothamsted Insect Survey light-trap time series; count regression with PoissonNLLLoss "
          "(log link) where the lr was tuned for a Gaussian log-count model ('Poisson loss goes to "
          "inf/NaN with SGD', PyTorch forum and statsmodels GLM divergence reports).")


class TrapGRU(nn.Module):
    def __init__(self, fin, hidden):
        super().__init__()
        self.gru = nn.GRU(fin, hidden, batch_first=True)
        self.site = nn.Linear(3, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, weather, site):
        _, h = self.gru(weather)
        return self.head(h[-1] + self.site(site)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(88 + seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 24][seed % 3]
    batch = [32, 24, 48][seed % 3]
    lr_bad = [0.3, 0.5, 0.2][seed % 3]
    nights, steps = 14, 120
    lr = 2e-3 if fixed else lr_bad

    n = steps * batch
    weather = torch.randn(n, nights, 6, generator=g)
    site = torch.randn(n, 3, generator=g)  # habitat: woodland cover, arable share, light pollution
    warm = weather[:, -3:, 0].mean(1) + 0.5 * weather[:, -7:, 1].mean(1)
    calm = -weather[:, -1, 2]
    moon = -weather[:, -1, 4]
    log_rate = 2.8 + 0.7 * warm + 0.3 * calm + 0.25 * moon + 0.4 * site[:, 0] - 0.2 * site[:, 1]
    counts = torch.poisson(log_rate.exp(), generator=g)

    model = TrapGRU(6, hidden)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    batches = [((weather[i * batch:(i + 1) * batch], site[i * batch:(i + 1) * batch]),
                counts[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.PoissonNLLLoss(log_input=True),
            "batches": batches, "steps": steps}
