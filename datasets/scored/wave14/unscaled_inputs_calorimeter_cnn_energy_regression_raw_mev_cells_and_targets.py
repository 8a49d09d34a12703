"""Calorimeter energy regression for electromagnetic showers (CaloGAN-like geometry: three
longitudinal layers as channels of an eta x phi cell image) with a small 2-D CNN, trained
directly on the cell energies in MeV against the true particle energy in MeV.

Mechanism
---------
Cell deposits are 0-1e4 MeV and the targets 1e4-1e5 MeV; nothing is normalised.  The
first convolution (``features.0``) therefore produces activations of ~1e3-1e4, the initial
prediction is off by ~5e4 MeV and the MSE is ~3e9 from step 0.  The weight gradients
scale with (error x activation) ~1e8-1e10, so the very first SGD+momentum updates are
many orders of magnitude larger than the weights; the very next forward overflows and the
loss is already inf at the second step.

ORIGIN
------
``features.0``: the first layer, which receives the raw MeV cell energies.

Fix
---
Work in normalised units: cell energies divided by 1 GeV and the target energy z-scored
with the mean/std of the training targets; same network, optimiser (SGD, lr, momentum)
and showers.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "features.0"
SOURCE = ("Calorimeter shower energy regression with CNNs (CaloGAN geometry, Paganini et "
          "al. 2018; CMS/ATLAS ML calibration studies); raw MeV cells and MeV targets")


def _showers(g, B, n):
    E = 1e4 + 9e4 * torch.rand(B, generator=g)               # MeV
    logE = torch.log(E / 1e4)
    # longitudinal sharing between the three layers shifts deeper with energy
    f = torch.stack([0.35 - 0.06 * logE, 0.55 + 0.02 * logE, 0.10 + 0.04 * logE], 1)
    f = f / f.sum(1, keepdim=True)
    c = torch.arange(n, dtype=torch.float32) - (n - 1) / 2
    ce = (torch.rand(B, 1, generator=g) - 0.5) * 2.0
    cp = (torch.rand(B, 1, generator=g) - 0.5) * 2.0
    imgs = []
    for layer, width in enumerate((0.8, 1.2, 2.0)):
        pe = torch.exp(-0.5 * ((c[None] - ce) / width) ** 2)
        pp = torch.exp(-0.5 * ((c[None] - cp) / width) ** 2)
        prof = pe[:, :, None] * pp[:, None, :]
        prof = prof / prof.flatten(1).sum(1)[:, None, None]
        img = E[:, None, None] * f[:, layer, None, None] * prof
        img = img * (1 + 0.1 * torch.randn(img.shape, generator=g) / torch.sqrt(E / 1e4)[:, None, None])
        img = img + 10.0 * torch.randn(img.shape, generator=g)          # electronic noise, MeV
        imgs.append(img.clamp_min(0.0))
    sampling = 0.9 + 0.05 * torch.randn(B, generator=g)      # sampling-fraction fluctuation
    return torch.stack(imgs, 1) * sampling[:, None, None, None], E


class CaloCNN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * c, 2 * c, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(2 * c, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.head(self.features(x)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=12, c=16, B=32, lr=1e-2, steps=80),
           dict(n=16, c=12, B=24, lr=1.5e-2, steps=90),
           dict(n=10, c=20, B=48, lr=2e-2, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4321 + seed)
    raw = [_showers(g, cfg["B"], cfg["n"]) for _ in range(cfg["steps"])]
    if fixed:
        Es = torch.cat([E for _, E in raw])
        mu, sd = Es.mean(), Es.std()
        batches = [(x / 1000.0, (E - mu) / sd) for x, E in raw]   # GeV cells, z-scored target
    else:
        batches = [(x, E) for x, E in raw]                       # raw MeV
    model = CaloCNN(cfg["c"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
