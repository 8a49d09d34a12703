"""Compound-class classifier from MS/MS spectra (CANOPUS-like task: lipid / peptide /
flavonoid / alkaloid ...): spectra binned into 5 Da m/z bins, features are
log10(relative intensity) with empty bins set to the floor log10(1e-4) = -4, so every
feature is <= 0. Two hand-written dense layers (bin-dropout friendly `SpecDense`) with ReLU,
then an nn.Linear classifier; cross-entropy, Adam.

Mechanism (dead_relu): `SpecDense` initialises its weight with
`torch.rand(out, in) / sqrt(in)` - uniform on [0, 1), all positive - where
`torch.randn` was intended. Against inputs that are all <= 0 (and mostly -4), every
pre-activation of the first layer is strongly negative for every spectrum, so every ReLU
unit is dead from step 0: zero output, zero gradient to its weights and bias. The second
SpecDense sees all-zero input (and its ReLU(0) passes no gradient either), so only the
classifier bias learns; the loss stays at ~log(n_classes) for the whole run.

ORIGIN: `enc.0`, the first SpecDense layer, whose ReLU units are dead from the first
forward pass; everything after it is starved of signal.

Fix: `torch.randn(out, in) / sqrt(in)` (zero-mean init) in SpecDense; nothing else.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "enc.0"
SOURCE = ("torch.rand vs torch.randn init typo (uniform [0,1) weights) in hand-written "
          "layers; log-intensity spectral features with a -4 floor as used in MS/MS "
          "embedding models (MS2DeepScore/CANOPUS-style inputs); dead ReLU from init "
          "(Lu et al. 2019, 'Dying ReLU and initialization')")

N_BINS = 200
N_CLASSES = 4


class SpecDense(nn.Module):
    def __init__(self, d_in, d_out, zero_mean):
        super().__init__()
        w = torch.randn(d_out, d_in) if zero_mean else torch.rand(d_out, d_in)
        self.weight = nn.Parameter(w / math.sqrt(d_in))
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x):
        return F.relu(x @ self.weight.t() + self.bias)


class SpecNet(nn.Module):
    def __init__(self, hid, zero_mean):
        super().__init__()
        self.enc = nn.Sequential(SpecDense(N_BINS, hid, zero_mean),
                                 SpecDense(hid, hid, zero_mean))
        self.cls = nn.Linear(hid, N_CLASSES)

    def forward(self, x):
        return self.cls(self.enc(x))


def _spectra(g, n):
    # each class has characteristic fragment bins / neutral-loss ladders
    proto = torch.zeros(N_CLASSES, N_BINS)
    gp = torch.Generator().manual_seed(77)
    for c in range(N_CLASSES):
        bins = torch.randperm(N_BINS, generator=gp)[:12]
        proto[c, bins] = torch.rand(12, generator=gp) * 0.8 + 0.2
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    inten = proto[y] * (torch.rand(n, N_BINS, generator=g) < 0.8).float()
    noise = (torch.rand(n, N_BINS, generator=g) < 0.08).float() * torch.rand(n, N_BINS, generator=g) * 0.5
    inten = inten + noise
    inten = inten / inten.max(1, keepdim=True).values.clamp_min(1e-8)
    x = torch.log10(inten.clamp_min(1e-4))          # <= 0, empty bins at -4
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    hid = [64, 128, 96][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    steps = 120

    model = SpecNet(hid, zero_mean=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, y):
        return F.cross_entropy(out, y)

    x, y = _spectra(g, bs * steps)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
