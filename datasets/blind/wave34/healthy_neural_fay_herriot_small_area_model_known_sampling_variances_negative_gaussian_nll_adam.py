"""Neural Fay-Herriot small-area model (healthy). Area-level direct survey estimates y_i of a
county poverty rate come with KNOWN design-based sampling variances D_i (from the survey's
replicate weights). The Fay-Herriot likelihood is y_i ~ N(mu(x_i), sigma_v^2 + D_i), with the
synthetic part mu(x_i) given by an MLP of standardised auxiliary data (ACS/tax/SNAP rates) and
a learned log model variance log sigma_v^2. The loss is the exact Gaussian negative
log-likelihood 0.5*[log(sigma_v^2 + D_i) + (y_i - mu_i)^2 / (sigma_v^2 + D_i)], Adam.

Why it looks alarming but is healthy: rates are on the 0-1 scale and D_i are 1e-4-1e-3, so
log(sigma_v^2 + D_i) is about -7 to -9 and the loss is strongly NEGATIVE once the model fits
(and keeps falling as sigma_v^2 shrinks toward the true model variance); small areas with large
D_i make the per-batch value jump around. Nothing overflows, the precision-weighting is the
intended Fay-Herriot shrinkage, and the fit improves steadily.

ORIGIN = None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Fay & Herriot (1979) area-level model with known sampling variances; neural / ML "
          "synthetic parts for SAE (e.g. US Census SAIPE-style models); Gaussian NLL with "
          "known heteroscedastic variances is negative for small variances")


class NeuralFH(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SiLU()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.synthetic = nn.Sequential(*layers)
        self.log_sv2 = nn.Parameter(torch.tensor(-4.0))

    def forward(self, x, D):
        mu = self.synthetic(x).squeeze(1) + 0.15
        var = torch.exp(self.log_sv2) + D
        return torch.stack([mu, var], 1)


def fh_nll(out, y):
    mu, var = out[:, 0], out[:, 1]
    return 0.5 * (torch.log(var) + (y - mu) ** 2 / var).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [32, 64, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [1e-2, 8e-3, 1.2e-2][seed % 3]
    bs = [64, 96, 128][seed % 3]
    steps = 200
    P = 8

    model = NeuralFH(P, width, depth)
    w = torch.randn(P, generator=g) * 0.3

    def sample(n):
        x = torch.randn(n, P, generator=g)
        theta = torch.sigmoid(-1.7 + x @ w + 0.2 * torch.sin(2 * x[:, 0]))   # true area rate
        theta = theta + 0.01 * torch.randn(n, generator=g)                   # model error
        D = torch.exp(torch.empty(n).uniform_(-9.2, -6.9, generator=g))     # known variances
        y = theta + D.sqrt() * torch.randn(n, generator=g)
        return (x, D), y

    batches = [sample(bs) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=fh_nll, batches=batches, steps=steps)
