"""Poverty mapping, transfer step: CNN predicting night-light intensity class from daytime imagery.

Domain: in the Jean et al. (2016) pipeline the CNN is first trained on a proxy task -- classify
each daytime satellite tile into low / medium / high VIIRS night-light intensity -- and its
features are then regressed on DHS / LSMS survey consumption. Here a small BN-free CNN is
trained from scratch on that proxy task. Inputs are surface reflectance bands scaled to [0, 1]
(non-negative). The practitioner trains with plain SGD and copies the learning rate (~1.6-2.0)
from a large-batch ImageNet recipe (linear scaling rule, lr = 0.1 x batch/256 at batch 4096-5120,
with BN and warmup) while actually training a BN-free net at batch 24-40 without warmup.

Mechanism: with non-negative inputs all weights of a filter receive gradients of the same sign
(the sign of that filter's back-propagated error), so a step that is far too large moves a whole
filter (and its bias) down at once. In the first few steps the too-large updates (loss spikes of 1.5-8 in the
first ~10 steps) drive pre-activations below zero at every pixel of every tile, first for part
of the first conv block and then for the whole second block; those ReLUs output zero everywhere,
pass no gradient and never recover. The pooled features are zero, the classifier outputs only
its bias and the cross-entropy plateaus at the class-prior entropy (~ln 3).

ORIGIN: "features.4" -- the ReLU after the second convolution (features.3): it is the layer that
dies completely (every channel, every pixel), cutting all signal to the classifier; the first
ReLU only loses part of its channels.

Fix: a learning rate suited to the batch actually used and a BN-free net trained from scratch
(lr = 0.1, 16-20x smaller); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.4"
SOURCE = ("Jean et al. 2016, Science, 'Combining satellite imagery and machine learning to predict "
          "poverty' (night-light proxy task); dying-ReLU after too-large SGD steps with "
          "non-negative inputs; Goyal et al. 2017 linear scaling rule misapplied at small batch")


class LightsCNN(nn.Module):
    def __init__(self, ch, width, n_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(ch, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.classifier = nn.Linear(2 * width, n_classes)

    def forward(self, x):
        return self.classifier(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [12, 16, 8][seed % 3]
    batch = [32, 24, 40][seed % 3]
    size = 16
    steps = 120
    lr = 0.1 if fixed else [1.6, 2.0, 1.8][seed % 3]

    batches = []
    for _ in range(steps):
        y = torch.randint(0, 3, (batch,), generator=g)            # low / medium / high lights
        density = (0.15 + 0.3 * y.float()).view(-1, 1, 1, 1)
        roofs = (torch.rand(batch, 1, size, size, generator=g) < density).float()
        x = 0.1 + 0.1 * torch.rand(batch, 4, size, size, generator=g)
        x[:, 2:] += 0.5 * roofs.expand(-1, 2, -1, -1)             # built-up: bright red/NIR
        x[:, 1:2] += 0.3 * (1 - roofs)                            # vegetation: green
        batches.append((x.clamp(0, 1), y))

    model = LightsCNN(4, width, 3)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
