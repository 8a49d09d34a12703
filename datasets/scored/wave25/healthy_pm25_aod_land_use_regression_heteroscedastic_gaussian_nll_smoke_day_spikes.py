"""Air-quality estimation: heteroscedastic MLP mapping satellite AOD + meteorology to PM2.5.

Domain: a public-health agency estimates daily ground-level PM2.5 on a grid from MODIS/MAIAC
aerosol optical depth, boundary-layer height, relative humidity, temperature, wind speed, road
density and land-use fractions (standardised), trained on regulatory monitor days. Because the
AOD-PM2.5 relation is much noisier under humid / low-boundary-layer conditions, the model
predicts a mean and a log-variance and is trained with torch.nn.GaussianNLLLoss (Adam), on
log(PM2.5) targets.

Why it looks alarming but is healthy:
  * the Gaussian NLL drops below zero once the predicted variances shrink below 1/(2 pi e): a
    negative, still-decreasing loss is the expected behaviour, not a bug;
  * about one batch in fifteen is a wildfire-smoke episode: real, correctly measured days with
    PM2.5 several times the usual level. Those batches make the loss jump by an order of
    magnitude for one step, and the run recovers right after (the variance head widens where
    AOD is high). Nothing is corrupt, clipped or non-finite.

ORIGIN: None -- healthy run.

Fix: none needed (fixed=True builds the identical run).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Satellite-AOD PM2.5 estimation (van Donkelaar et al.; Di et al. 2019 ensemble PM2.5 "
          "models); heteroscedastic regression with Gaussian NLL (Nix & Weigend 1994, "
          "Lakshminarayanan et al. 2017); wildfire smoke episodes in monitor records")


class HeteroPM(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SiLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.mean = nn.Linear(d, 1)
        self.logvar = nn.Linear(d, 1)

    def forward(self, x):
        h = self.body(x)
        return torch.cat([self.mean(h), self.logvar(h).clamp(-8, 6)], -1)


def gaussian_nll(out, y, _nll=nn.GaussianNLLLoss()):
    return _nll(out[:, 0], y, out[:, 1].exp())


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 96, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    batch = [64, 96, 128][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    d_in, steps = 10, 200
    smoke_every = [15, 13, 17][seed % 3]

    batches = []
    for s in range(steps):
        x = torch.randn(batch, d_in, generator=g)
        aod, blh, rh = x[:, 0], x[:, 1], x[:, 2]
        mu = 2.6 + 0.5 * aod - 0.25 * blh + 0.1 * rh + 0.15 * x[:, 3] * x[:, 4] + 0.1 * x[:, 5]
        sigma = 0.05 + 0.15 * torch.sigmoid(1.5 * rh - blh)
        if s % smoke_every == smoke_every - 1:
            # wildfire smoke: thick aerosol layer, PM2.5 3-8x the usual level
            x[:, 0] = x[:, 0] + 2.5
            mu = mu + 1.2 + 0.8 * torch.rand(batch, generator=g)
            sigma = sigma * 2.0
        y = mu + sigma * torch.randn(batch, generator=g)
        batches.append((x, y))
    model = HeteroPM(d_in, width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=gaussian_nll, batches=batches, steps=steps)
