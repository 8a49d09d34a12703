"""Partial-discharge (PD) source classification for HV cable joints / GIS: a small CNN reads
the phase-resolved PD pattern (PRPD map: 36 phase bins x 16 apparent-charge bins, pulse
counts accumulated over 50 power cycles, log1p-compressed) and classifies the defect
(corona, surface tracking, internal void, floating electrode); the convolutional features
are pooled over the map, passed through a tanh fully connected layer and a linear
classifier; cross-entropy, RMSprop.

Mechanism: the pooling is written as `features.sum(dim=(2, 3))` (a "total activity per
channel" descriptor, as in hand-crafted PRPD statistics) instead of a mean. With 576
positions and non-negative ReLU features of ~0.06..0.1 on average, each pooled descriptor
is ~30..60 on average (a few hundred for busy maps), so the tanh layer's pre-activations
have a median magnitude of ~15..30 and are beyond |3| for ~90% of the units and maps.
They are dominated by the common, class-independent total-activity level, so a unit has
the same sign for (nearly) all inputs: the tanh units sit at +-1 (float32 tanh(>9) ==
1.0), their local gradient 1 - tanh^2 is 0 or nearly so, nothing below them learns, and
their constant outputs give the classifier nothing but the class prior. The cross-entropy stays at ~ln 4 = 1.39 for the
whole run; no value becomes non-finite.

ORIGIN = "head.1": the Tanh of the fully connected layer is where the units saturate and
the gradient is cut; the convolutions below it are healthy but receive zero gradient.

Fix: average instead of sum pooling (`features.mean(dim=(2, 3))`, i.e. smaller
pre-activations); the same model, data, optimiser and steps.
"""
import math

import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "head.1"
SOURCE = (
    "PRPD-pattern CNN classifiers for PD defect types (e.g. Puccetti / Montanari PD "
    "pattern recognition; IEC 60270 PRPD maps); sum-pooled descriptors fed to a tanh "
    "layer saturate it (LeCun et al. 'Efficient BackProp': keep tanh inputs O(1))."
)

PH, AMP = 36, 16
N_CLASSES = 4


def _prpd(g, cls):
    ph = torch.arange(PH, dtype=torch.float32).unsqueeze(1) * 10.0      # degrees, (36, 1)
    q = torch.arange(AMP, dtype=torch.float32).unsqueeze(0)             # charge bin, (1, 16)
    jit = lambda s: float(torch.randn(1, generator=g)) * s
    if cls == 0:       # corona: negative half-cycle around the voltage peak, low, narrow charge
        c = 270 + jit(10)
        lam = 40 * torch.exp(-0.5 * ((ph - c) / 15) ** 2) * torch.exp(-0.5 * ((q - 3 - jit(1)) / 1.2) ** 2)
    elif cls == 1:     # surface: asymmetric, broad charge, larger in the positive half
        lam = 25 * torch.exp(-0.5 * ((ph - 60 - jit(10)) / 30) ** 2) * torch.exp(-q / (6 + jit(1)))
        lam += 10 * torch.exp(-0.5 * ((ph - 240 - jit(10)) / 30) ** 2) * torch.exp(-q / 4)
    elif cls == 2:     # internal void: symmetric "rabbit ears" on the rising flanks
        for c0 in (45.0, 225.0):
            c = c0 + jit(8)
            lam_c = 20 * torch.exp(-0.5 * ((ph - c) / 20) ** 2) * torch.exp(-0.5 * ((q - 7 - jit(1)) / 3) ** 2)
            lam = lam_c if c0 == 45.0 else lam + lam_c
    else:              # floating electrode: both halves, high fixed-charge bands
        lam = 15 * (torch.exp(-0.5 * ((ph - 90 - jit(10)) / 35) ** 2) + torch.exp(-0.5 * ((ph - 270 - jit(10)) / 35) ** 2))
        lam = lam * torch.exp(-0.5 * ((q - 12 - jit(1)) / 1.0) ** 2)
    lam = lam * (0.6 + 0.8 * float(torch.rand(1, generator=g))) + 0.3    # activity level + noise floor
    counts = torch.poisson(lam, generator=g)
    return torch.log1p(counts)


def _batch(g, n):
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    x = torch.stack([_prpd(g, int(c)) for c in y]).unsqueeze(1)
    return x.float(), y


class PRPDNet(nn.Module):
    def __init__(self, ch, hidden, sum_pool):
        super().__init__()
        self.sum_pool = sum_pool
        self.features = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
        )
        self.head = nn.Sequential(nn.Linear(ch, hidden), nn.Tanh(), nn.Linear(hidden, N_CLASSES))

    def forward(self, x):
        f = self.features(x)
        pooled = f.sum(dim=(2, 3)) if self.sum_pool else f.mean(dim=(2, 3))
        return self.head(pooled)


def build(seed: int, fixed: bool = False) -> dict:
    ch = [16, 24, 12][seed % 3]
    hidden = [32, 64, 48][seed % 3]
    batch = [32, 24, 40][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    steps = 150

    g = torch.Generator().manual_seed(6060 + seed)
    batches = [_batch(g, batch) for _ in range(steps)]

    torch.manual_seed(seed)
    model = PRPDNet(ch, hidden, sum_pool=not fixed)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
