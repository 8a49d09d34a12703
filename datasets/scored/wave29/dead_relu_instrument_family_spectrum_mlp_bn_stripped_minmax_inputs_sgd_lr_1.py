"""Instrument-family frame classifier (ReLU MLP on min-max scaled spectra) whose units all die.

Mechanism: an NSynth-style instrument-family classifier takes one magnitude-spectrum frame,
min-max scaled per frame to [0, 1] (so every input is non-negative), through 2-3 ReLU layers to
a softmax.  It was tuned with BatchNorm1d after each Linear at SGD+momentum lr ~1; BatchNorm was
then stripped for a streaming build and the recipe kept.  Because all inputs are >= 0, the
gradient of every first-layer weight of a unit has the same sign (that of the unit's error
signal), so one momentum-amplified step at lr ~1 moves each unit's whole weight vector up or
down together.  Units pushed down become negative for every non-negative input, and the next
overshoots finish the rest: within a few dozen steps every ReLU of a layer outputs exact zeros, no
gradient reaches anything before the classifier, and the loss sits at log(n_classes) -- a stall
with no non-finite value.

ORIGIN: ``net.1`` -- the first ReLU, fed only non-negative inputs, is where the same-sign
updates kill units first; the deeper layers die because their input went to zero.

Fix: an SGD learning rate suited to the BN-free net, 0.05 (same model, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("LeCun et al. 1998, 'Efficient BackProp' sec. 4.3 (non-zero-mean inputs give same-sign "
          "weight updates); dying ReLUs after removing BatchNorm but keeping its learning rate; "
          "Engel et al. 2017, NSynth instrument families")


class FrameMLP(nn.Module):
    def __init__(self, n_in, width, depth, n_cls):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers += [nn.Linear(d, n_cls)]
        self.net = nn.Sequential(*layers)

    def forward(self, spec):
        return self.net(spec)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(6000 + seed)
    depth = [2, 3, 2][seed % 3]
    width = [128, 96, 192][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = 0.05 if fixed else [1.2, 1.0, 0.9][seed % 3]
    n_cls, n_bins, steps = 10, 128, 150

    # instrument families: harmonic comb at a family-specific spacing times a spectral envelope
    f = torch.arange(n_bins).float()
    batches = []
    spacing = 3 + torch.randperm(12, generator=g)[:n_cls].float()
    centre = torch.rand(n_cls, generator=g) * n_bins
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        sp = spacing[y].unsqueeze(1) * (1 + 0.03 * torch.randn(bs, 1, generator=g))
        comb = torch.relu(torch.cos(2 * torch.pi * f / sp)) ** 4
        env = torch.exp(-((f - centre[y].unsqueeze(1)) / 40.0) ** 2)
        mag = comb * env * (0.3 + torch.rand(bs, 1, generator=g)) + 0.05 * torch.rand(bs, n_bins, generator=g)
        x = (mag - mag.amin(1, keepdim=True)) / (mag.amax(1, keepdim=True) - mag.amin(1, keepdim=True))
        batches.append((x, y))

    torch.manual_seed(seed)
    model = FrameMLP(n_bins, width, depth, n_cls)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
