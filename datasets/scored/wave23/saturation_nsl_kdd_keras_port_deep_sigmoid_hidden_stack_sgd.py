"""Network intrusion detection on NSL-KDD-style connection records (41
attributes, min-max scaled to [0, 1]; five classes normal/DoS/Probe/R2L/U2R,
class-balanced batches) - a port of a Keras tutorial model with six to eight
``Dense(width, activation='sigmoid')`` hidden layers and a softmax output
(Keras' glorot_uniform kernels and zero biases kept), trained with SGD +
momentum.

Mechanism: logistic hidden units pass at most 1/4 of the gradient
(sigma' <= 0.25) and, with the glorot init, sit in a narrow band around 0.5
whose variation shrinks layer after layer; the top hidden layer's activations
are nearly the same for every record.  The gradient reaching the lower
layers shrinks by ~4^depth, so they never learn, and the softmax head can
only fit the (balanced) class prior from the nearly constant top activations
- the cross-entropy stays at ~log(5) for the whole run (Glorot & Bengio
2010's saturation of deep logistic nets), a stall with no non-finite value.

ORIGIN: ``net.1`` - the first sigmoid hidden layer, where the saturation and
information loss through the logistic stack starts (and whose gradient is
the smallest).

Fix: non-saturating hidden activations (ReLU in place of the hidden
sigmoids); softmax head, loss, optimiser and data unchanged.
"""
import random

import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Keras NSL-KDD / KDD'99 intrusion-detection tutorials with stacked Dense(..., "
          "activation='sigmoid') hidden layers (Tavallaee et al. 2009 NSL-KDD); Glorot & Bengio 2010 "
          "on saturation and vanishing gradients in deep logistic networks")

N_ATTR = 41
N_CLS = 5


def _records(g, n, centers):
    y = torch.arange(n) % N_CLS                       # class-balanced batch (rare U2R/R2L oversampled)
    y = y[torch.randperm(n, generator=g)]
    x = torch.sigmoid(centers[y] + 2.5 * torch.randn(n, N_ATTR, generator=g))   # in [0, 1]
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    depth = r.choice([6, 7, 8])
    width = r.choice([32, 48, 64])
    lr = r.choice([0.05, 0.08])
    bs = r.choice([40, 60, 100])
    steps = r.choice([150, 200, 250])

    g = torch.Generator().manual_seed(14000 + seed)
    centers = 1.5 * torch.randn(N_CLS, N_ATTR, generator=g)
    batches = [_records(g, bs, centers) for _ in range(steps)]

    torch.manual_seed(seed)
    layers, d = [], N_ATTR
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU() if fixed else nn.Sigmoid()]
        d = width
    layers.append(nn.Linear(d, N_CLS))
    model = _DenseStack(nn.Sequential(*layers))
    for m in model.modules():           # Keras Dense defaults: glorot_uniform kernel, zero bias
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)


class _DenseStack(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)
