"""Predictive autoscaler for a Kubernetes deployment: from the last window of cluster metrics
(request rate in req/s, container memory working set in bytes, CPU usage in millicores, p95
latency in ms, for the last few scrape intervals) an MLP predicts the log-rate of the number of
replicas needed in the next interval; Poisson NLL (log_input=True), SGD with momentum.

Mechanism: the features are fed exactly as Prometheus returns them -- bytes ~1e8-1e9, req/s
~1e3-1e4, millicores ~1e3 -- with no standardisation.  The first Linear produces
pre-activations of ~1e7-1e8, the predicted log-rate is of that order, and exp(log_rate) in the
Poisson NLL overflows: the loss is inf/NaN from the first steps.

ORIGIN: ``net.0`` -- the first Linear is where the raw feature scale enters the model and
produces the enormous pre-activations.

Fix: standardise every feature with the mean/std of the training window (log1p first for the
heavy-tailed byte and request counters); same model, lr, steps and targets.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("Predictive autoscaling for Kubernetes / cloud services (e.g. Rzadca et al., 'Autopilot', "
          "EuroSys 2020; Google/Alibaba trace studies); raw Prometheus metrics fed to a network "
          "(LeCun et al. 'Efficient BackProp': normalise inputs)")


class ReplicaForecaster(nn.Module):
    def __init__(self, n_feat, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)  # log of the expected replica count


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 128, 96][seed % 3]
    window = [6, 8, 10][seed % 3]
    lr = [1e-3, 5e-4, 2e-3][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 100
    n_feat = 4 * window

    torch.manual_seed(seed)
    model = ReplicaForecaster(n_feat, hidden)

    def sample(n):
        load = torch.rand(n, 1, generator=g) * 0.9 + 0.1
        trend = (1 + 0.03 * torch.randn(n, 1, generator=g) * torch.arange(window).float()).clamp_min(0.3)
        rps = 8000.0 * load * trend * (1 + 0.05 * torch.randn(n, window, generator=g))
        mem = 6e8 * (0.5 + load) * (1 + 0.02 * torch.randn(n, window, generator=g))
        cpu = 2000.0 * load * trend * (1 + 0.05 * torch.randn(n, window, generator=g))
        p95 = 40 + 200 * load ** 3 * (1 + 0.05 * torch.randn(n, window, generator=g))
        replicas = torch.poisson(1 + rps[:, -1].clamp_min(0) * trend[:, -1] / 250.0, generator=g)
        return torch.cat([rps, mem, cpu, p95], 1), replicas

    cal_x, _ = sample(2048)
    cal_x = torch.cat([torch.log1p(cal_x[:, :2 * window]), cal_x[:, 2 * window:]], 1)
    mu, sd = cal_x.mean(0), cal_x.std(0) + 1e-6
    batches = []
    for _ in range(steps):
        x, y = sample(bs)
        if fixed:
            x = torch.cat([torch.log1p(x[:, :2 * window]), x[:, 2 * window:]], 1)
            x = (x - mu) / sd
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.PoissonNLLLoss(log_input=True), batches=batches, steps=steps)
