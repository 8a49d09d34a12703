"""HRRP radar automatic target recognition: 1-D CNN over high-resolution range profiles.

Mechanism: the classifier sees |range profile| magnitudes (non-negative, mean ~1 after
dividing by the profile's L2 norm * sqrt(bins)) of 4-6 aircraft classes (scatterer layouts
along the fuselage). The team copied a learning rate of 0.2-0.3 with momentum 0.9
from a BatchNorm ResNet recipe, but this plain Conv1d-ReLU stack has no normalisation.
Because every input is non-negative, the first conv's pre-activations are dominated by the
sum of its weights; the first large momentum steps drive most filters' weights/biases
negative for every profile, those ReLUs output 0 on all inputs and get zero gradient from
then on. The few surviving units cannot separate the classes; the cross-entropy sits at
~log(C) - a stall without any non-finite value.

ORIGIN: ``features.1`` - the ReLU after the first Conv1d, the first layer whose units die
(everything downstream is starved because this layer outputs zeros).

Fix: learning rate 0.01 (a rate suited to an un-normalised conv stack); nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.1"
SOURCE = ("Known pattern: large SGD learning rate copied from a BatchNorm recipe kills ReLU units "
          "in an un-normalised CNN on non-negative inputs (CS231n 'dying ReLU'; HRRP-based radar "
          "target recognition with 1-D CNNs, e.g. MSTAR/HRRP literature).")


class HRRPNet(nn.Module):
    def __init__(self, n_cls, width, depth):
        super().__init__()
        layers, c = [], 1
        for i in range(depth):
            layers += [nn.Conv1d(c, width, 7, padding=3), nn.ReLU(), nn.MaxPool1d(2)]
            c = width
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(width, n_cls)

    def forward(self, x):
        return self.classifier(self.features(x).amax(-1))


def _profiles(g, n, n_cls, bins=128):
    gen = torch.Generator().manual_seed(4242)
    layouts = torch.rand(n_cls, 6, generator=gen) * 0.6 + 0.2   # scatterer positions
    amps = torch.rand(n_cls, 6, generator=gen) + 0.3
    y = torch.randint(0, n_cls, (n,), generator=g)
    aspect = 0.8 + 0.4 * torch.rand(n, 1, generator=g)           # aspect-angle foreshortening
    shift = torch.rand(n, 1, generator=g) * 0.2 - 0.1
    pos = (layouts[y] - 0.5) * aspect + 0.5 + shift
    r = torch.linspace(0, 1, bins)
    prof = (amps[y][:, :, None] * torch.exp(-((r - pos[:, :, None]) / 0.01) ** 2)).sum(1)
    prof = (prof + 0.05 * torch.randn(n, bins, generator=g)).abs()
    prof = prof / prof.norm(dim=1, keepdim=True) * math.sqrt(bins)
    return prof[:, None], y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(33 + seed)
    n_cls = [4, 5, 6][seed % 3]
    width = [32, 48, 24][seed % 3]
    depth = [3, 2, 3][seed % 3]
    lr_bad = [0.2, 0.3, 0.25][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 150
    model = HRRPNet(n_cls, width, depth)
    x, y = _profiles(g, bs * steps, n_cls)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    lr = 0.01 if fixed else lr_bad
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
