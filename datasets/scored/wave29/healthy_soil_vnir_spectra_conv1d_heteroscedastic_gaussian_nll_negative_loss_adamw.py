"""Healthy: soil organic carbon from Vis-NIR spectra with a 1-D CNN that predicts a mean and a
variance, trained with GaussianNLLLoss -- the loss goes negative and occasional organic-soil
batches spike it, and both are fine.

What a naive monitor would flag: the heteroscedastic Gaussian NLL (``full=False``) is
0.5*(log var + (y-mu)^2/var); once the model is accurate the predicted variances drop below 1
and the mean loss becomes negative and keeps falling.  Batches that contain peat / organic
horizons (rare, high-SOC, noisier lab values) produce visible spikes that recover within a
step or two.  The variance head is a softplus with a floor, so nothing diverges.

Mechanism: none -- the CNN on SNV-normalised reflectance (400-2500 nm,
resampled to 128 bands) learns log-SOC; AdamW at 2e-3.

ORIGIN: None (healthy).

Fix: nothing to fix; ``fixed`` has no effect.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Vis-NIR soil spectroscopy SOC models (LUCAS topsoil, Padarian et al. 2019 'Using deep "
          "learning to predict soil properties from regional spectral data'); heteroscedastic "
          "regression with torch.nn.GaussianNLLLoss giving negative loss values.")

BANDS = 128


class SpectraCNN(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers, c = [], 1
        for i in range(depth):
            layers += [nn.Conv1d(c, width, 7, padding=3), nn.BatchNorm1d(width), nn.GELU(), nn.MaxPool1d(2)]
            c = width
        self.features = nn.Sequential(*layers)
        self.mean_head = nn.Linear(width, 1)
        self.var_head = nn.Linear(width, 1)

    def forward(self, x):
        h = self.features(x[:, None, :]).mean(-1)
        mu = self.mean_head(h).squeeze(-1)
        var = F.softplus(self.var_head(h)).squeeze(-1) + 1e-3
        return torch.stack([mu, var], dim=-1)


def gaussian_nll(out, y):
    return F.gaussian_nll_loss(out[:, 0], y, out[:, 1], full=False)


def _soils(n, g):
    wl = torch.linspace(400, 2500, BANDS)
    soc = torch.exp(0.6 * torch.randn(n, generator=g) + 0.3)           # % SOC, mineral soils
    organic = torch.rand(n, generator=g) < 0.02                        # peat / organic horizons
    soc = torch.where(organic, 15 + 10 * torch.rand(n, generator=g), soc)
    clay = torch.rand(n, generator=g)
    iron = torch.rand(n, generator=g)
    base = 0.15 + 0.35 * torch.sigmoid((wl - 700) / 300)[None] * (1 - 0.5 * torch.log1p(soc)[:, None] / 3)
    water = 0.08 * torch.exp(-((wl - 1900) / 40) ** 2)[None] * (0.5 + clay[:, None])
    oh = 0.05 * torch.exp(-((wl - 2200) / 25) ** 2)[None] * clay[:, None]
    fe = 0.04 * torch.exp(-((wl - 900) / 80) ** 2)[None] * iron[:, None]
    ls = torch.log1p(soc)[:, None]
    om = 0.03 * ls * (torch.exp(-((wl - 1730) / 35) ** 2) + torch.exp(-((wl - 2310) / 30) ** 2))[None]
    vis = 0.05 * ls * torch.sigmoid((wl - 600) / 60)[None]            # organic matter flattens the visible slope
    r = base - water - oh - fe - om - vis + 0.002 * torch.randn(n, BANDS, generator=g)
    snv = (r - r.mean(1, keepdim=True)) / r.std(1, keepdim=True)
    logsoc = torch.log(soc)
    lab_noise = torch.where(organic, 0.4, 0.08) * torch.randn(n, generator=g)
    y = logsoc + lab_noise
    return snv, (y - 0.3) / 0.6


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(191 + seed)
    torch.manual_seed(seed)
    width = [32, 24, 48][seed % 3]
    depth = [3, 4, 3][seed % 3]
    batch = [32, 48, 24][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    steps = 200
    x, y = _soils(steps * batch, g)
    model = SpectraCNN(width, depth)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    batches = [(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": gaussian_nll, "batches": batches, "steps": steps}
