"""Process-analytical NIR soft sensor: 1-D CNN predicts granule moisture from spectra, SGD lr ~0.1.

Mechanism: near-infrared absorbance spectra (256 wavelengths, SNV-normalised) taken
in-line on a fluid-bed granulator are regressed on the moisture content (standardised,
MSE) by a small BN-free Conv1d network. The training script was adapted from an
ImageNet ResNet recipe and kept its SGD (Nesterov, momentum 0.9) lr of ~0.1 (0.1-0.15). NIR
spectra are extremely collinear - neighbouring wavelengths move together - so the
curvature of the loss along the common direction is ~ (number of correlated
channels) x larger than for decorrelated image pixels, and lr * lambda_max is far
above 2. The first steps overshoot, every further step multiplies the error, the
weights grow geometrically and the loss overflows to inf/NaN within ~10-30 steps.

ORIGIN: None - an optimiser setting; no module is the start.

Fix: lr = 0.004-0.006; same model, data, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("NIR/PAT soft sensors with 1-D CNNs (Cui & Fearn 2018 'Modern practical convolutional "
          "neural networks for multivariate regression: applications to NIR calibration'); "
          "LeCun et al. 1998 'Efficient BackProp' (correlated inputs -> large Hessian eigenvalue "
          "-> smaller max stable lr); Goyal et al. 2017 ImageNet lr 0.1 recipe.")

L = 256


class NIRNet(nn.Module):
    def __init__(self, ch, depth):
        super().__init__()
        layers, c = [], 1
        for i in range(depth):
            layers += [nn.Conv1d(c, ch, 9, padding=4), nn.ReLU(), nn.AvgPool1d(2)]
            c = ch
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(ch * (L >> depth), 1)

    def forward(self, x):
        return self.head(self.features(x).flatten(1)).squeeze(-1)


def _spectra(g, n):
    wl = torch.linspace(0, 1, L)[None, :]
    water = torch.exp(-((wl - 0.45) / 0.05) ** 2) + 0.6 * torch.exp(-((wl - 0.8) / 0.04) ** 2)
    api = torch.exp(-((wl - 0.3) / 0.08) ** 2)
    excip = torch.exp(-((wl - 0.6) / 0.12) ** 2)
    moist = torch.rand(n, 1, generator=g)
    a = torch.rand(n, 1, generator=g)
    scatter = 1 + 0.3 * torch.randn(n, 1, generator=g)          # multiplicative path-length effect
    baseline = 0.5 * torch.randn(n, 1, generator=g) + 0.3 * torch.randn(n, 1, generator=g) * wl
    s = scatter * (0.8 * moist * water + 0.5 * a * api + excip) + baseline
    s = s + 0.01 * torch.randn(n, L, generator=g)
    s = (s - s.mean(1, keepdim=True)) / s.std(1, keepdim=True)  # SNV
    return s[:, None, :], ((moist - 0.5) / 0.29).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(88 + seed)
    ch = [16, 24, 12][seed % 3]
    depth = [3, 2, 3][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = [0.1, 0.15, 0.12][seed % 3]  # ImageNet recipe (0.1), "tuned" a little per run
    if fixed:
        lr = [0.005, 0.004, 0.006][seed % 3]
    steps = 120
    model = NIRNet(ch, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    batches = [_spectra(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
