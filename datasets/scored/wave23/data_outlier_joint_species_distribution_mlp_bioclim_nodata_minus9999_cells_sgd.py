"""Joint species distribution MLP (multi-label presence/absence) hit by -9999 nodata raster cells.

Mechanism: a deep-SDM style MLP maps 19 WorldClim-like bioclimatic variables plus elevation and
land-cover fractions (standardised with statistics computed on valid cells) to presence of S
co-occurring species against an equal number of pseudo-absences, trained with BCE-with-logits
and SGD+momentum. The covariate table was extracted from GeoTIFFs whose nodata value is -9999;
a block of coastal/lake sites extracted over masked pixels keeps -9999 in most columns. Those
rows arrive in one batch (its position depends on the seed). Their pre-activations are
thousands of times the normal scale, the loss jumps to 1e2-1e3, and the first-layer weight
gradient is the nodata value times a sigmoid error of ~1, so the step (and the momentum that
carries it on) moves the first-layer weights by many times their size. Afterwards the hidden
ReLUs are dead or dominated by the kicked direction; the net falls back to the 0.693 of a
constant 50% prediction (with occasional spikes) and stops improving (a stall, all values
finite), while the run without those rows keeps learning.

ORIGIN = "net.0": the corrupt rows are inputs, and the first Linear is the layer they hit and the
one whose weights take the oversized step; everything after follows from it.

Fix: mask nodata (any value <= -9000 in the raw table) and drop those rows from the batch
before standardisation; same model, optimiser, other batches and steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("rasterio/GDAL extraction keeping nodata=-9999 in WorldClim / CHELSA covariate tables; "
          "deep-SDM (Botella et al. 2018, MALPOLON) multi-species MLPs; forum reports of "
          "'training ruined after one batch' traced to nodata sentinels")

N_COV = 24


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(4000 + seed)
    n_sp = [16, 20, 24][seed % 3]
    width = [128, 96, 160][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.1, 0.2, 0.15][seed % 3]
    bs = [64, 96, 80][seed % 3]
    steps = 200
    bad_step = [40, 65, 90][seed % 3]
    torch.manual_seed(seed)
    layers, d = [], N_COV
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, n_sp))

    class JSDM(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(*layers)

        def forward(self, x):
            return self.net(x)

    model = JSDM()
    # species niches: Gaussian responses to two climate axes, plus habitat preferences
    n = bs * steps
    raw = torch.randn(n, N_COV, generator=g)
    cent = torch.randn(n_sp, 4, generator=g) * 0.8
    wid = 0.6 + 0.6 * torch.rand(n_sp, 4, generator=g)
    z = raw[:, None, :4] - cent[None]
    suit = -((z / wid[None]) ** 2).sum(-1) + raw[:, 4:8] @ (torch.randn(4, n_sp, generator=g) * 0.5)
    # presences vs. an equal number of pseudo-absences: threshold at each species' median
    logit = 3.0 * (suit - suit.median(0).values)
    y = (torch.rand(n, n_sp, generator=g) < torch.sigmoid(logit)).float()
    mu, sd = torch.zeros(N_COV), torch.ones(N_COV)
    batches = []
    for i in range(steps):
        xb = raw[i * bs:(i + 1) * bs].clone()
        yb = y[i * bs:(i + 1) * bs].clone()
        if i == bad_step:
            k = bs // 8
            cols = torch.arange(N_COV)[torch.arange(N_COV) % 3 != 2]   # masked bands
            xb[:k, cols] = -9999.0                                     # nodata kept
        if fixed:
            keep = ~(xb <= -9000).any(1)
            xb, yb = xb[keep], yb[keep]
        xb = (xb - mu) / sd
        batches.append((xb, yb))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
