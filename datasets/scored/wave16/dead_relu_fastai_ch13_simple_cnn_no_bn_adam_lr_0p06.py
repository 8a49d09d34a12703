"""fast.ai book chapter 13 ("Convolutional Neural Networks") ``simple_cnn``: stride-2 conv+ReLU
blocks without batch norm, trained with the Learner default optimizer (Adam) at lr=0.06.

Mechanism
---------
The chapter builds ``conv(ni, nf, ks=3, act=True)`` = Conv2d(stride 2) + ReLU, stacks five of
them (the last one without activation) and calls ``learn.fit(1, 0.06)``; the book then shows
with ActivationStats that almost all activations are zero and the loss does not move.  With
Adam at lr=0.06 every weight moves by ~0.06 on the first steps -- as large as the weights
themselves -- and the conv biases/filters of the deeper blocks are pushed to the point where
their pre-activations are negative for every input.  Those ReLUs output exactly 0 and pass no
gradient; once the second block is entirely dead the logits are just the last conv's bias, and
the loss sits at ln(10) for the rest of the run (the first block keeps ~40% of its units alive,
but nothing above it does).

ORIGIN
------
"1.1" -- the ReLU of the second conv block (conv(8, 16)): it is the first block whose units are
all dead after the first large Adam steps, cutting the gradient to everything below it.

Fix
---
fixed=True trains the same network with Adam at a sane lr (3e-3 / 2e-3 / 2e-3 depending on the
seed); init, data, architecture unchanged.  (The unfixed lr is 0.06 / 0.08 / 0.1.)
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "1.1"
SOURCE = ("fast.ai book (Howard & Gugger) ch.13 simple_cnn without batchnorm, learn.fit(1, 0.06) "
          "-> ActivationStats show activations collapsing to zero")


def conv(ni, nf, ks=3, act=True):
    res = nn.Conv2d(ni, nf, stride=2, kernel_size=ks, padding=ks // 2)
    if act:
        res = nn.Sequential(res, nn.ReLU())
    return res


def _mnist_like(g, n_batches, bs, side, n_cls):
    base = torch.randn(n_cls, 1, side // 4, side // 4, generator=g)
    templ = nn.functional.interpolate(base, size=(side, side), mode="bilinear", align_corners=False)
    templ = (templ > 0.3).float() * 0.8
    out = []
    for _ in range(n_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templ[y] * (0.6 + 0.6 * torch.rand(bs, 1, 1, 1, generator=g))
        x = x + 0.8 * torch.randn(x.shape, generator=g)
        out.append(((x - 0.3) / 0.45, y))       # Normalize like the DataBlock's batch_tfms
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(113 + seed)
    w = [(8, 16, 32, 64), (8, 16, 32, 48), (4, 8, 16, 32)][seed % 3]
    bs = [64, 128, 96][seed % 3]
    lr_bad = [0.06, 0.08, 0.1][seed % 3]
    lr_ok = [3e-3, 2e-3, 2e-3][seed % 3]
    side, n_cls, steps = 28, 10, 90

    model = nn.Sequential(
        conv(1, w[0], ks=5),      # 14x14
        conv(w[0], w[1]),         # 7x7
        conv(w[1], w[2]),         # 4x4
        conv(w[2], w[3]),         # 2x2
        conv(w[3], n_cls, act=False),   # 1x1
        nn.Flatten())

    batches = _mnist_like(g, steps, bs, side, n_cls)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr_ok if fixed else lr_bad)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
