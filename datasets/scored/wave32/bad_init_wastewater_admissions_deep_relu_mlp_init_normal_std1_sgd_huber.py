"""Wastewater-to-hospital-admissions regressor (deep ReLU MLP, SGD, Huber loss).

Mechanism: a sewershed-level model maps 7 days of log10 SARS-CoV-2 RNA concentration, flow and
a few sentinel covariates to next-week log admissions per 100k. The practitioner re-initialises
every Linear with ``nn.init.normal_(w, 0.0, 1.0)`` (a "standard normal" init copied from a
NumPy prototype) instead of the fan-in scaled default. With std 1 and fan-in 64-96, every
ReLU layer multiplies the activation scale by about sqrt(fan_in / 2) ~ 6, so after 6-8 layers
the output is ~1e5-1e6 from step 0. The Huber gradient at the output is bounded, but the weight
gradients of the early layers are products of these huge activations, so the first SGD steps
move weights by enormous amounts, the output overflows and the loss becomes non-finite.

ORIGIN: "net.0", the first Linear: the geometric growth of activation scale starts at the
first re-initialised layer and compounds through every later one.

Fix: kaiming (He) normal init for the ReLU layers (fan-in scaled), zero biases.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("He et al. 2015 'Delving deep into rectifiers' (variance must scale as 2/fan_in); "
          "common forum reports of deep MLPs with N(0,1) init producing inf/NaN losses on step 1")


class AdmissionsMLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [6, 7, 8][seed % 3]
    width = [64, 96, 80][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 150
    n_in = 7 * 3 + 4
    # synthetic sewersheds: log10 RNA conc (7 days), log flow (7 days), positivity (7 days), covariates
    N = 4000
    trend = torch.randn(N, 1, generator=g)
    days = torch.arange(7).float().unsqueeze(0)
    lconc = 5.0 + 0.6 * trend + 0.05 * trend * days + 0.2 * torch.randn(N, 7, generator=g)
    lflow = 0.3 * torch.randn(N, 7, generator=g)
    pos = torch.sigmoid(trend + 0.1 * torch.randn(N, 7, generator=g))
    cov = torch.randn(N, 4, generator=g)
    y = (0.8 * (lconc[:, -1] - 5.0) - 0.3 * lflow.mean(1) + 1.2 * pos[:, -1] + 0.2 * cov[:, 0]
         + 0.1 * torch.randn(N, generator=g)).unsqueeze(1)
    X = torch.cat([lconc, lflow, pos, cov], 1)
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()

    layers = []
    d = n_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    model = AdmissionsMLP(layers)
    for m in model.net:
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.HuberLoss(delta=1.0)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, N, (bs,), generator=g)
        batches.append((X[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
