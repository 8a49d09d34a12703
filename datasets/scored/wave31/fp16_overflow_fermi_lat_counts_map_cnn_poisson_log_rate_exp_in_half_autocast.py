"""Gamma-ray sky model for Fermi-LAT-like counts maps: a small fully-convolutional CNN maps
per-pixel templates (gas column density, inverse-Compton model, exposure, a point-source
catalogue map) to the log expected photon count per pixel, trained with a hand-written Poisson
negative log-likelihood exp(log_mu) - k * log_mu (as a deviance) under float16 autocast with no
GradScaler, and Adam.

Mechanism: under ``torch.autocast(dtype=torch.float16)`` the convolutions return float16, so the
network's output log_mu is float16 and ``torch.exp(log_mu)`` in the loss is computed in float16
(exp is not on autocast's fp32 list).  float16 overflows above 65504, i.e. for log_mu > 11.09.  The
output bias starts at log(mean counts) and the first part of training is calm, but the bright
point sources reach 1e5 - 5e5 photons per pixel (most patches have a pixel above 65504); within
15-25 steps, as the model starts to fit them, log_mu in those pixels crosses 11.09, exp gives inf
and the loss becomes inf.

ORIGIN: ``head``, the last conv that produces the float16 log-rate map which overflows when
exponentiated (the overflow itself happens in the loss's exp, which is not a module).

Fix: evaluate the likelihood in float32 (``log_mu = log_mu.float()`` before exp), keeping the
network under float16 autocast; same model, data, optimiser and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "head"
SOURCE = ("float16 max 65504 (IEEE half) vs Poisson rates of bright gamma-ray sources; PyTorch "
          "autocast op lists (exp not autocast to fp32); Fermi-LAT deep-learning sky models "
          "(e.g. Caron et al. 2018, Panes et al. 2021 point-source CNNs)")


def _patch(g, n=16):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, n), torch.linspace(-1, 1, n), indexing="ij")
    b0 = (torch.rand(1, generator=g).item() - 0.5) * 1.6           # latitude offset of the plane
    gas = torch.exp(-((yy - b0) / 0.25) ** 2) * (1 + 0.3 * torch.sin(3 * xx + torch.rand(1, generator=g).item() * 6))
    ic = torch.exp(-((yy - b0) / 0.9) ** 2)
    expo = 0.8 + 0.4 * torch.rand(1, generator=g).item() + 0.1 * xx
    ps = torch.zeros(n, n)
    for _ in range(int(torch.randint(1, 4, (1,), generator=g))):
        cx, cy = (torch.rand(2, generator=g) * 1.6 - 0.8).tolist()
        flux = 10 ** (2.5 + 2.0 * torch.rand(1, generator=g).item())
        ps += flux * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * 0.06 ** 2))
    mu = expo * (300 * gas + 80 * ic + 40 + 30 * ps)
    k = torch.poisson(mu, generator=g)
    x = torch.stack([gas, ic, expo, torch.log1p(ps)])
    return x, k


class SkyCNN(nn.Module):
    def __init__(self, ch, n_layers, mean_counts):
        super().__init__()
        layers, c = [], 4
        for _ in range(n_layers):
            layers += [nn.Conv2d(c, ch, 3, padding=1), nn.GELU()]
            c = ch
        self.body = nn.Sequential(*layers)
        self.head = nn.Conv2d(ch, 1, 1)
        with torch.no_grad():
            self.head.bias.fill_(math.log(mean_counts))

    def forward(self, x):
        return self.head(self.body(x)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [16, 12, 20][seed % 3]
    n_layers = [3, 4, 3][seed % 3]
    lr = [1.5e-3, 2e-3, 1e-3][seed % 3]
    bs = [6, 8, 4][seed % 3]
    steps = 100

    data = [_patch(g) for _ in range(bs * steps)]
    x = torch.stack([d[0] for d in data])
    k = torch.stack([d[1] for d in data])
    x = (x - x.mean((0, 2, 3), keepdim=True)) / x.std((0, 2, 3), keepdim=True)

    torch.manual_seed(seed)
    model = SkyCNN(ch, n_layers, k.mean().item())
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(log_mu, counts):
        if fixed:
            log_mu = log_mu.float()                       # likelihood in fp32
        # Poisson deviance / 2: exp(log_mu) - k log_mu minus its value at the saturated model
        sat = counts - counts * torch.log(counts.clamp_min(1.0))
        return (torch.exp(log_mu) - counts * log_mu - sat).mean() / counts.mean()

    batches = [(x[i * bs:(i + 1) * bs], k[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
