"""Stellar-label regression (Teff, log g, [Fe/H]) from continuum-normalised 1-D spectra, a
StarNet/Payne-style ReLU MLP trained with SGD + momentum on standardised labels.

Mechanism: spectra are continuum-normalised (flux ~ 1 with absorption lines below 1) and
standardised per pixel with statistics from a clean reference shard (continuum pixels have a
scatter of ~0.01).  One later batch comes from single-exposure (visit) spectra whose cosmic-ray
mask was not applied: a few spectra carry one- to three-pixel spikes of 1e3-5e3 times the
continuum, i.e. ~1e5 standard deviations after standardisation.  The spike multiplies straight
into the first layer's weight gradient and into every downstream activation; that one SGD+momentum
step moves the weights by many orders of magnitude more than any normal step, the next forward
pass overflows and the loss is non-finite within a step or two.  The failing step depends on the
seed (the shuffle).

ORIGIN: ``net.0``, the first Linear: it is the first layer the corrupt batch reaches, and its
weight gradient is where the spike first produces the runaway update.  The cause is in the data.

Fix: apply the cosmic-ray mask, i.e. clip the continuum-normalised flux to a physical range
(``flux.clamp(0, 1.5)``) before standardising, so the spikes cannot reach the network; nothing else
changes.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("APOGEE visit spectra with unmasked cosmic-ray / persistence spikes (APOGEE pixel mask "
          "bits, Nidever et al. 2015); StarNet (Fabbro et al. 2018) and The Payne (Ting et al. "
          "2019) style label regression; known failure of SGD on a single extreme batch")


def _spectra(g, n, n_pix):
    teff = torch.rand(n, generator=g) * 2500 + 3800
    logg = torch.rand(n, generator=g) * 4.0 + 0.5
    feh = torch.rand(n, generator=g) * 2.0 - 1.5
    lam = torch.linspace(0, 1, n_pix)
    centres = torch.rand(24, generator=g)
    kind = torch.randint(0, 3, (24,), generator=g)          # metal / gravity / temperature lines
    depth = torch.zeros(n, 24)
    t = (teff[:, None] - 5000) / 1000
    depth += (kind == 0).float() * 0.25 * torch.sigmoid(2 * feh[:, None] + 1 - 0.5 * t)
    depth += (kind == 1).float() * 0.2 * torch.sigmoid(logg[:, None] - 2.5)
    depth += (kind == 2).float() * 0.3 * torch.sigmoid(-1.5 * t)
    prof = torch.exp(-((lam[None, :] - centres[:, None]) / 0.006) ** 2)      # (24, n_pix)
    flux = 1 - depth @ prof
    flux = flux + 0.01 * torch.randn(n, n_pix, generator=g)
    y = torch.stack([teff, logg, feh], 1)
    return flux, y


class MLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [128, 192, 256][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.02, 0.01, 0.015][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 200
    bad_step = [22, 35, 28][seed % 3] + 3 * (seed // 3)
    n_pix = 256

    flux, y = _spectra(g, bs * steps, n_pix)
    # the visit-spectra batch with unmasked cosmic rays
    for j in range(bad_step * bs, bad_step * bs + 2 + seed % 3):
        p = int(torch.randint(0, n_pix - 3, (1,), generator=g))
        flux[j, p:p + 1 + j % 3] = 1000.0 + 4000.0 * torch.rand(1, generator=g).item()
    if fixed:
        flux = flux.clamp(0.0, 1.5)                           # cosmic-ray mask
    # per-pixel standardisation with statistics from the reference (first) shard
    ref = flux[:20 * bs]
    x = (flux - ref.mean(0)) / ref.std(0).clamp_min(1e-3)
    y = (y - y.mean(0)) / y.std(0)

    torch.manual_seed(seed)
    layers, d = [], n_pix
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 3))
    model = MLP(layers)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
