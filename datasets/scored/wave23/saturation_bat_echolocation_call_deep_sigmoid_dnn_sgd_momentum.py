"""Bat echolocation call classifier: a deep fully-connected net with sigmoid hidden units.

Mechanism: ultrasonic detector recordings are cut around each call; a spectrogram patch (32
frequency bins x 6 frames, log-magnitude, standardised) is flattened into a deep MLP that
names the species from its call shape (FM sweep, QCF, CF with harmonics, ...). The network
is written as in the pre-ReLU literature (and old classification toolboxes it was ported from):
6-8 hidden layers with ``nn.Sigmoid()``, default PyTorch init, SGD+momentum, cross-entropy.
Sigmoid units sit on a non-zero-mean output (~0.5) with slope <= 0.25, so every layer shrinks
the backward signal by ~0.25 * ||W|| and adds a common-mode offset that pushes the next layer's
units together; after 6-8 layers the hidden representation is nearly the same for every call
and the gradient reaching the lower layers is ~1e-4..1e-6 of the head's. The net only learns
the class prior; the loss stays at its entropy for the whole run (a stall, all finite).

ORIGIN = "net.1": the first Sigmoid, where the saturating nonlinearity (bounded slope, 0.5 offset)
first compresses the signal; the collapse compounds through each later sigmoid.

Fix: ReLU hidden units with Kaiming init (a non-saturating activation); same depth, width, data,
optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Glorot & Bengio 2010 'Understanding the difficulty of training deep feedforward neural "
          "networks' (sigmoid saturation in deep nets); bat call classifiers built from deep "
          "sigmoid MLPs (e.g. iBats-era ensembles, Walters et al. 2012) ported to PyTorch")

N_SP = 8
F_BINS, FRAMES = 32, 6


def _calls(g, n):
    y = torch.randint(0, N_SP, (n,), generator=g)
    f = torch.arange(F_BINS).float()[None, :, None]
    t = torch.arange(FRAMES).float()[None, None, :]
    start = torch.tensor([28., 26., 22., 18., 14., 24., 12., 20.])[y]
    slope = torch.tensor([-4., -2., -0.5, 0., -3., -1., 0., -2.5])[y]       # FM vs. CF
    harm = torch.tensor([0., 1., 0., 1., 0., 1., 1., 0.])[y]
    start = start + 1.5 * torch.randn(n, generator=g)                       # individual variation
    centre = (start[:, None, None] + slope[:, None, None] * t)
    spec = torch.exp(-0.5 * ((f - centre) / 1.2) ** 2)
    spec = spec + harm[:, None, None] * 0.5 * torch.exp(-0.5 * ((f - centre / 2) / 1.2) ** 2)
    spec = spec * (0.5 + torch.rand(n, 1, 1, generator=g))                  # distance to mic
    spec = torch.log(spec + 0.05) + 0.3 * torch.randn(n, F_BINS, FRAMES, generator=g)
    x = spec.reshape(n, -1)
    x = (x - x.mean(0)) / x.std(0)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(10000 + seed)
    depth = [6, 7, 8][seed % 3]
    width = [128, 96, 160][seed % 3]
    lr = [0.05, 0.03, 0.02][seed % 3]
    bs = [64, 48, 32][seed % 3]
    steps = 200
    torch.manual_seed(seed)
    layers, d = [], F_BINS * FRAMES
    for _ in range(depth):
        lin = nn.Linear(d, width)
        if fixed:
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.zeros_(lin.bias)
        layers += [lin, nn.ReLU() if fixed else nn.Sigmoid()]
        d = width
    layers.append(nn.Linear(d, N_SP))

    class BatDNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(*layers)

        def forward(self, x):
            return self.net(x)

    model = BatDNN()
    x, y = _calls(g, bs * steps)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
