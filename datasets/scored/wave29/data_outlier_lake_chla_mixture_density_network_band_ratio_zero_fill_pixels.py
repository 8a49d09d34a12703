"""Chlorophyll-a retrieval MDN on Sentinel-2 MSI remote-sensing reflectance; one batch carries
zero-filled no-data pixels whose band-ratio features are inf/NaN.

Mechanism: a water-quality team trains a mixture density network (Pahlevan et al. style) that
maps per-pixel Rrs at the MSI bands to log10(chl-a), with the classic band-ratio features
(red-edge/red 705/665, green/blue 560/490, NIR/red) appended to log-Rrs.  Matchup pixels are
pulled from L2 products where masked pixels (land adjacency, glint, cloud) are written as 0
instead of NaN.  A handful of these slip into one batch mid-run: 0/0 and x/0 give NaN and inf
features, log(0) gives -inf.  Standardisation uses constants from the clean calibration set, so
only that batch is affected -- but the first linear layer turns it into NaN activations, the
mixture NLL is NaN, and the Adam update writes NaN into every weight.  Every later loss is NaN.

ORIGIN: ``trunk.0`` -- the first linear layer is where the corrupt rows enter the network and
where the first non-finite activation appears.

Fix: the data pipeline drops pixels with non-positive Rrs (the no-data fill) before computing
ratio features; the affected batch is simply a few rows smaller.  Model, optimiser and every
other batch are unchanged.
"""
import math

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "trunk.0"
SOURCE = ("Pahlevan et al. 2020 'Seamless retrievals of chlorophyll-a from Sentinel-2 (MSI) and "
          "Sentinel-3 (OLCI) in inland and coastal waters: a machine-learning approach' (MDN); "
          "no-data pixels stored as 0 in L2 products producing inf/NaN band ratios in matchup sets.")

BANDS = [443, 490, 560, 665, 705, 740, 783]


class ChlMDN(nn.Module):
    def __init__(self, fin, hidden, depth, k):
        super().__init__()
        layers, d = [], fin
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Linear(hidden, 3 * k)
        self.k = k

    def forward(self, x):
        p = self.head(self.trunk(x))
        logit_w, mu, log_sigma = p.split(self.k, dim=-1)
        return torch.stack([logit_w, mu, log_sigma.clamp(-7, 5)], dim=-1)


def mdn_nll(out, y):
    logit_w, mu, log_sigma = out.unbind(-1)
    log_w = torch.log_softmax(logit_w, dim=-1)
    z = (y[:, None] - mu) / log_sigma.exp()
    comp = -0.5 * z ** 2 - log_sigma - 0.5 * math.log(2 * math.pi)
    return -torch.logsumexp(log_w + comp, dim=-1).mean()


def _rrs(log_chl, g):
    n = log_chl.shape[0]
    chl = 10 ** log_chl
    tss = 10 ** (0.5 * log_chl + 0.3 * torch.randn(n, generator=g))
    wl = torch.tensor(BANDS).float()
    # crude bio-optical shape: pigment absorption dips at blue/red, scattering bump at red edge
    base = 0.004 * torch.exp(-((wl - 560) / 120) ** 2)
    absorb = torch.exp(-((wl - 443) / 40) ** 2) + 0.6 * torch.exp(-((wl - 665) / 20) ** 2)
    rededge = torch.exp(-((wl - 705) / 18) ** 2)
    r = (base[None] * (1 + 0.3 * tss[:, None]) / (1 + 0.25 * chl[:, None] * absorb[None])
         + 0.0006 * torch.log1p(chl)[:, None] * rededge[None])
    r = r * (1 + 0.03 * torch.randn(n, len(BANDS), generator=g))
    return r.clamp_min(1e-5)


def _features(r):
    ratios = torch.stack([r[:, 4] / r[:, 3], r[:, 2] / r[:, 1], r[:, 6] / r[:, 3]], dim=1)
    return torch.cat([torch.log10(r), torch.log10(ratios)], dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(300 + seed)
    torch.manual_seed(seed)
    depth = [3, 4, 2][seed % 3]
    hidden = [64, 48, 96][seed % 3]
    batch = [64, 48, 80][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    steps = 150
    bad_step = [57, 88, 121][seed % 3]

    n = steps * batch
    log_chl = (torch.randn(n, generator=g) * 0.6 + 0.8).clamp(-1.0, 2.7)
    r = _rrs(log_chl, g)
    feats = _features(r)
    mean, std = feats.mean(0), feats.std(0)  # calibration-set constants (clean data)

    batches = []
    for i in range(steps):
        rb = r[i * batch:(i + 1) * batch].clone()
        yb = log_chl[i * batch:(i + 1) * batch]
        if i == bad_step:
            rows = torch.randperm(batch, generator=g)[:4]
            rb[rows[:2]] = 0.0                    # fully masked pixels: every band written as 0
            rb[rows[2:], 3] = 0.0                 # red band dropped (saturated / glint mask)
            if fixed:
                keep = (rb > 0).all(dim=1)
                rb, yb = rb[keep], yb[keep]
        with torch.no_grad():
            xb = (_features(rb) - mean) / std
        batches.append((xb, yb))

    model = ChlMDN(feats.shape[1], hidden, depth, k=[5, 4, 6][seed % 3])
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": mdn_nll, "batches": batches, "steps": steps}
