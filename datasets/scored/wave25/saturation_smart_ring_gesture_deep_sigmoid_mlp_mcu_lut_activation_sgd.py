"""Micro-gesture recognition on a smart ring (finger taps / swipes / pinches) from a 32-value
feature vector (IMU + capacitive statistics per window) with a deep, narrow MLP destined for a
microcontroller, trained with momentum SGD.

Mechanism: the author picked logistic-sigmoid hidden activations because the MCU inference
library ships a q7/q15 lookup-table sigmoid, and stacked 6-8 of them. Sigmoid outputs are all
positive with mean ~0.5 and the hidden Linears use the default (uniform, fan-in) init, so each
layer's pre-activations are dominated by a common, input-independent term; the representation
collapses towards a constant vector with depth, and in backward every layer multiplies the
gradient by sigmoid' <= 0.25 (times a sub-unit weight gain). The first layers get gradients
~1e-5 of the last layer's; what reaches the classifier barely depends on the input, and the
loss stays around ln(number of gestures).

ORIGIN: "net.1", the first Sigmoid: the vanishing starts at the first saturating activation and
compounds through every later one.

Fix: a non-saturating activation (ReLU, which the MCU library also supports) in place of every
sigmoid; same widths, depth, init, data and optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("vanishing gradients through stacked logistic sigmoids (Glorot & Bengio 2010; "
          "Hochreiter 1991); CMSIS-NN / TFLite-Micro LUT sigmoid chosen for MCU gesture MLPs")


class RingMLP(nn.Module):
    def __init__(self, n_in, width, depth, n_cls, act):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), act()]
            d = width
        layers.append(nn.Linear(d, n_cls))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [6, 7, 8][seed % 3]
    width = [64, 48, 96][seed % 3]
    lr = [0.05, 0.08, 0.1][seed % 3]
    bs = [32, 48, 64][seed % 3]
    steps = 200
    n_in, n_cls = 32, 8
    model = RingMLP(n_in, width, depth, n_cls, nn.ReLU if fixed else nn.Sigmoid)
    centers = torch.randn(n_cls, n_in, generator=g) * 1.2
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = centers[y] + torch.randn(bs, n_in, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
