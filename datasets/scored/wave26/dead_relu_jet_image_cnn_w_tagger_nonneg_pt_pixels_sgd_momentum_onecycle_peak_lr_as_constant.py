"""Jet-image CNN (W -> qq vs QCD) without batch norm, trained with SGD+momentum at a constant
learning rate equal to the peak of a BN-ResNet one-cycle recipe; the ReLU units die within
the first 10-20 steps.

Mechanism: jet images are 20x20 (eta, phi) grids of calorimeter pT, centred, rotated and
normalised to unit total intensity, so every input pixel is >= 0.  The net is a small
LeNet-like stack (conv5-ReLU-pool, conv3-ReLU-pool, dense-ReLU, dense -> logit) with BCE-with-
logits.  The learning rate 0.8-1.2 (momentum 0.9) is the peak of a "super-convergence" one-cycle
schedule for a BatchNorm ResNet, used here as a constant without the warm-up.  The
run starts to learn, but the momentum steps soon overshoot (a loss spike).  With non-negative
inputs every weight of a first-layer filter gets a gradient of the same sign for a given
upstream error, so such an overshooting step shifts whole filters (and their biases) negative;
once a filter's output is <= 0 on every (non-negative) image its ReLU passes no gradient and it
never recovers.  Within 10-20 steps nearly all first-layer filters, and with them the second
conv and the dense units, are dead; the logit is a constant and the loss sits at ~ln 2 for the
rest of the run (no inf/NaN).

ORIGIN: "features.0", the first conv: it is the layer whose filters see only non-negative
pixels and die first, cutting off the signal (and the gradient) for every later layer.

Fix: a learning rate suited to a BN-free net (0.02, same momentum); nothing else changes.
Seeds change the number of filters, the dense width, the learning rate and the batch size.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.0"
SOURCE = ("de Oliveira et al., 'Jet-images -- deep learning edition' (JHEP 2016) CNN W tagger "
          "without BN; Smith & Topin 'Super-convergence' one-cycle peak lr 1-3 (needs BN); "
          "dying ReLU with large learning rates (Lu et al. 2019 'Dying ReLU and "
          "initialization'; cs231n notes: 'as much as 40% of your network can be dead' with "
          "a too-high learning rate).")

N = 20


def _images(n, g):
    y = (torch.rand(n, generator=g) < 0.5).float()
    ii = torch.arange(N).float() - (N - 1) / 2
    ey, ex = torch.meshgrid(ii, ii, indexing="ij")
    imgs = torch.zeros(n, 1, N, N)
    for j in range(n):
        img = torch.zeros(N, N)
        if y[j] > 0:
            sep = 3.0 + 4.0 * torch.rand(1, generator=g)
            z = 0.2 + 0.3 * torch.rand(1, generator=g)
            img += (1 - z) * torch.exp(-((ex + z * sep) ** 2 + ey ** 2) / 1.5)
            img += z * torch.exp(-((ex - (1 - z) * sep) ** 2 + ey ** 2) / 1.5)
        else:
            w = 1.0 + 2.0 * torch.rand(1, generator=g)
            img += torch.exp(-(ex ** 2 + ey ** 2) / w)
            img += 0.15 * torch.exp(-((ex - 4 * torch.randn(1, generator=g)) ** 2 +
                                      (ey - 4 * torch.randn(1, generator=g)) ** 2) / 6.0)
        img += 0.02 * torch.rand(N, N, generator=g) * (torch.rand(N, N, generator=g) < 0.15)
        imgs[j, 0] = img / img.sum() * 10.0   # unit total pT (x10 for pixel scale)
    return imgs, y


class JetCNN(nn.Module):
    def __init__(self, c1, dense):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c1, 2 * c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(2 * c1 * 25, dense), nn.ReLU(), nn.Linear(dense, 1),
            nn.Flatten(0))

    def forward(self, x):
        return self.classifier(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    c1 = [8, 12, 16][seed % 3]
    dense = [64, 48, 96][seed % 3]
    lr = 0.02 if fixed else [1.0, 0.8, 1.2][seed % 3]
    bs = [32, 48, 40][seed % 3]
    steps = 100
    g = torch.Generator().manual_seed(6000 + seed)
    batches = [_images(bs, g) for _ in range(steps)]
    torch.manual_seed(seed)
    model = JetCNN(c1, dense)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
