"""Radar target classification from micro-Doppler spectrograms (drone / bird / walking
person / vehicle): a small BN-free CNN over a 32 x 32 time-Doppler map (log power,
standardised), LogSoftmax + NLLLoss, SGD with Nesterov momentum.

Mechanism: the hyper-parameters were copied from a ResNet/BatchNorm recipe (lr 0.15..0.25,
Nesterov momentum 0.9) that is stable only because BatchNorm re-centres every
pre-activation; this network has no normalisation. Within the first ~20 steps the momentum-
amplified updates push the biases and weights of the fully connected ReLU layer (and then
of the second convolution) so far negative that their pre-activations are below zero for every
spectrogram. Those units output exactly 0 and get exactly 0 gradient, so they never
recover; the classifier is left with a constant input and the loss sits at ln 4 = 1.386
(or above it) for the rest of the run. No value becomes non-finite.

ORIGIN = "classifier.2": the ReLU after the first fully connected layer is where the units
die first (15..60% of them inactive for every input within the first 2..5 steps, ~90..100%
by the end); the second convolution's ReLU ("features.4") follows a few steps later once
the gradient through the dead FC units is gone, and ends 75..100% dead.

Fix: a learning rate suited to a BN-free network (0.015..0.02, same Nesterov momentum);
the same model, data, batches and steps.
"""
import math

import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "classifier.2"
SOURCE = (
    "Micro-Doppler UAV/bird classification CNNs (e.g. Kim & Moon 2016 human activity "
    "micro-Doppler DCNN; drone-vs-bird radar challenges); the 'dying ReLU' failure when a "
    "BatchNorm recipe's lr=0.1 Nesterov SGD is reused on a BN-free CNN (cs231n notes: "
    "'as much as 40% of your network can be dead' with too high a learning rate)."
)

N_CLASSES = 4
T = D = 32


def _spectrogram(g, cls):
    t = torch.arange(T, dtype=torch.float32)
    dop = torch.arange(D, dtype=torch.float32).unsqueeze(1)        # (D, 1)
    v0 = 8 + 16 * float(torch.rand(1, generator=g))
    img = torch.zeros(D, T)
    if cls == 0:   # multirotor UAV: body line + periodic blade flashes over the Doppler axis
        img += torch.exp(-0.5 * ((dop - v0) / 1.0) ** 2)
        period = int(torch.randint(3, 6, (1,), generator=g))
        ph = int(torch.randint(0, period, (1,), generator=g))
        flash = ((t.long() + ph) % period == 0).float()
        img += 0.8 * flash.unsqueeze(0) * torch.exp(-0.5 * ((dop - v0) / 9.0) ** 2)
    elif cls == 1:  # bird: wing-beat sinusoid around the body line
        f = 0.08 + 0.08 * float(torch.rand(1, generator=g))
        a = 3 + 3 * float(torch.rand(1, generator=g))
        traj = v0 + a * torch.sin(2 * math.pi * f * t + float(torch.rand(1, generator=g)) * 6.28)
        img += torch.exp(-0.5 * ((dop - v0) / 1.2) ** 2) * 0.7
        img += torch.exp(-0.5 * ((dop - traj) / 1.2) ** 2)
    elif cls == 2:  # walking person: torso + large limb swing with harmonics
        f = 0.05 + 0.04 * float(torch.rand(1, generator=g))
        a = 6 + 4 * float(torch.rand(1, generator=g))
        ph = float(torch.rand(1, generator=g)) * 6.28
        img += torch.exp(-0.5 * ((dop - v0) / 1.5) ** 2)
        for k, w in ((1, 1.0), (2, 0.5)):
            traj = v0 + a / k * torch.sin(2 * math.pi * k * f * t + ph)
            img += w * torch.exp(-0.5 * ((dop - traj) / 1.0) ** 2)
    else:           # vehicle: narrow constant line (+ a weak wheel line)
        img += torch.exp(-0.5 * ((dop - v0) / 0.8) ** 2)
        img += 0.3 * torch.exp(-0.5 * ((dop - v0 * 0.5) / 0.8) ** 2)
    img = img + 0.25 * torch.rand(D, T, generator=g)                 # clutter / noise floor
    img = 10 * torch.log10(img + 1e-2)
    return (img - img.mean()) / img.std()


def _batch(g, n):
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    x = torch.stack([_spectrogram(g, int(c)) for c in y]).unsqueeze(1)
    return x.float(), y


class MicroDopplerCNN(nn.Module):
    def __init__(self, ch, fc):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(2 * ch * 8 * 8, fc), nn.ReLU(),
            nn.Linear(fc, N_CLASSES), nn.LogSoftmax(dim=1),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    ch = [8, 12, 6][seed % 3]
    fc = [64, 32, 48][seed % 3]
    batch = [32, 24, 40][seed % 3]
    lr = ([0.02, 0.015, 0.02] if fixed else [0.2, 0.15, 0.25])[seed % 3]
    steps = 150

    g = torch.Generator().manual_seed(9000 + seed)
    batches = [_batch(g, batch) for _ in range(steps)]

    torch.manual_seed(seed)
    model = MicroDopplerCNN(ch, fc)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    loss_fn = nn.NLLLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
