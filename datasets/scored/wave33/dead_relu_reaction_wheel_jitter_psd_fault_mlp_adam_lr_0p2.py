"""Spacecraft reaction-wheel health classifier from micro-vibration (jitter) PSDs, ReLU MLP.

Mechanism: the AOCS team classifies wheel state (nominal, static imbalance, bearing wear,
lubricant starvation, cage instability) from 64-bin power-spectral-density magnitudes of the
wheel-mounted accelerometer, scaled to [0, ~3] per bin (non-negative, strongly correlated
across bins). The optimiser is Adam at lr 0.15-0.25 (taken from a learning-rate range test on a
logistic-regression baseline). Adam moves every weight by ~lr on the first steps regardless
of gradient scale; because the inputs are all non-negative, a hidden unit's pre-activation has
the same sign for almost every spectrum, and the first large steps push most first-layer
units negative for all of them. A dead ReLU has exactly zero gradient, Adam's moment
estimates decay to zero and it never comes back; the survivors cannot separate the fault
classes and the cross-entropy plateaus - a stall, no NaN.

ORIGIN: ``mlp.1`` - the ReLU after the first Linear, where the units die first (the deeper
layers are starved because it outputs zeros).

Fix: lr 1e-3 (Adam's default); model, data and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("Known pattern: dying ReLU from too-large Adam steps on non-negative spectral inputs "
          "(Lu et al. 2019 'Dying ReLU and Initialization'; reaction-wheel micro-vibration / "
          "jitter PSD fault diagnosis in spacecraft AOCS health monitoring).")


def _psd(g, n, n_cls, bins=64):
    f = torch.linspace(0, 1, bins)
    y = torch.randint(0, n_cls, (n,), generator=g)
    speed = 0.15 + 0.25 * torch.rand(n, 1, generator=g)          # wheel speed -> harmonic position
    base = 0.4 + 0.3 * torch.exp(-f / 0.3)
    spec = base.expand(n, bins).clone()
    harm = lambda k, w, a: a * torch.exp(-((f - k * speed) / w) ** 2)
    spec += harm(1, 0.02, 0.6)
    cls_terms = [
        lambda: 0 * spec,
        lambda: harm(1, 0.02, 1.5),                                   # static imbalance
        lambda: harm(2.6, 0.05, 0.9) + harm(3.4, 0.05, 0.7),          # bearing defect tones
        lambda: 0.5 * torch.exp(-((f - 0.8) / 0.15) ** 2),            # broadband lube starvation
        lambda: harm(0.4, 0.03, 1.0),                                 # cage (sub-synchronous)
    ]
    extra = torch.stack([t().expand(n, bins) for t in cls_terms[:n_cls]], 1)
    spec = spec + extra[torch.arange(n), y]
    spec = spec * (0.8 + 0.4 * torch.rand(n, 1, generator=g))
    spec = (spec + 0.1 * torch.randn(n, bins, generator=g)).clamp_min(0)
    return spec, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(61 + seed)
    n_cls = [5, 4, 5][seed % 3]
    width = [128, 64, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr_bad = [0.15, 0.2, 0.25][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 150
    layers, d = [], 64
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, n_cls))
    model = nn.Sequential()
    model.add_module("mlp", nn.Sequential(*layers))
    x, y = _psd(g, bs * steps, n_cls)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else lr_bad)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
