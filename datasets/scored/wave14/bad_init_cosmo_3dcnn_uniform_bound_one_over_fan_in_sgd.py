"""3-D CNN regressing cosmological parameters (sigma_8, Omega_m) from simulated density
cubes (Ravanbakhsh et al. 2017 / CAMELS-style), with a hand-written uniform init whose
bound is 1/fan_in instead of 1/sqrt(fan_in).

Mechanism
---------
The user re-implemented "LeCun uniform" for every Conv3d/Linear as
``bound = 1.0 / fan_in`` (the square root was dropped).  Each layer then multiplies the
activation std by about sqrt(fan_in) * bound / sqrt(3) = 1/sqrt(3 * fan_in) (0.11 for the
27-tap first conv, ~0.02-0.04 deeper, and again /sqrt(2) per ReLU), so after five layers
the signal reaching the output is ~1e-7 of the input: the prediction is just the (tiny)
output bias.  With standardised targets the loss sits at ~1.0 (the target variance) and
the gradients of every weight are scaled by the same vanishing products, so plain SGD
with momentum makes no progress at all -> the loss stalls from step 0.

ORIGIN
------
``features.0``: the first Conv3d, where the geometric shrinkage of the activation scale
starts (every later layer repeats it).

Fix
---
``nn.init.kaiming_uniform_(w, nonlinearity="relu")`` (bound sqrt(6/fan_in)), zero biases.
Everything else (data, optimiser, lr, batches) is identical.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("CNN cosmological-parameter inference from 3-D density fields (Ravanbakhsh 2017, "
          "CAMELS CMD); hand-written uniform init bound 1/fan_in instead of 1/sqrt(fan_in)")


def _grf_batch(g, B, n):
    """Gaussian random fields with P(k) ~ sigma8^2 k^-1 exp(-(k R)^2), R set by Omega_m.
    Parameters are Latin-hypercube sampled per batch, as in the CAMELS LH set."""
    lh = lambda: (torch.randperm(B, generator=g) + torch.rand(B, generator=g)) / B
    sig8 = 0.6 + 0.4 * lh()
    om = 0.1 + 0.4 * lh()
    k = torch.fft.fftfreq(n) * n
    kk = torch.sqrt(k[:, None, None] ** 2 + k[None, :, None] ** 2 + k[None, None, :] ** 2)
    kk[0, 0, 0] = 1.0
    R = 0.15 + 0.6 * om                                      # smoothing length (cells)
    amp = sig8[:, None, None, None] * kk.pow(-0.5) * torch.exp(-0.5 * (kk * R[:, None, None, None]) ** 2)
    amp[:, 0, 0, 0] = 0.0
    white = torch.randn(B, n, n, n, generator=g)
    field = torch.fft.ifftn(torch.fft.fftn(white, dim=(-3, -2, -1)) * amp, dim=(-3, -2, -1)).real
    field = field / 0.1                                       # fixed global units
    theta = torch.stack([(sig8 - 0.8) / (0.4 / math.sqrt(12)),
                         (om - 0.3) / (0.4 / math.sqrt(12))], dim=1)
    return field.unsqueeze(1), theta


class CosmoCNN(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(1, c, 3, padding=1), nn.ReLU(), nn.MaxPool3d(2),
            nn.Conv3d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool3d(2),
            nn.Conv3d(2 * c, 4 * c, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool3d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(4 * c, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, x):
        return self.head(self.features(x))


def _init(model, fixed):
    for m in model.modules():
        if isinstance(m, (nn.Conv3d, nn.Linear)):
            fan_in = m.weight[0].numel()
            if fixed:
                nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
            else:
                bound = 1.0 / fan_in                        # BUG: should be 1/sqrt(fan_in)
                nn.init.uniform_(m.weight, -bound, bound)
                nn.init.uniform_(m.bias, -bound, bound)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=16, c=8, hidden=64, B=16, lr=0.002, steps=150),
           dict(n=16, c=6, hidden=32, B=20, lr=0.004, steps=130),
           dict(n=12, c=10, hidden=48, B=12, lr=0.003, steps=170)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    model = CosmoCNN(cfg["c"], cfg["hidden"])
    _init(model, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = [_grf_batch(g, cfg["B"], cfg["n"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
