"""d2l.ai "Implementation of Multilayer Perceptrons from Scratch" (Fashion-MNIST, one hidden ReLU
layer of 256 units, W = randn * 0.01) trained with ``l.sum().backward()`` and ``torch.optim.SGD``.

Mechanism
---------
The d2l v0.x training loop has two branches: with a torch optimizer it calls
``l.mean().backward()``; with the book's own ``d2l.sgd`` updater it calls ``l.sum().backward()``
and the updater divides by the batch size (``param -= lr * param.grad / batch_size``).  The
student mixed them: summed loss, but ``torch.optim.SGD(params, lr=0.1)``, which does not divide.
The effective learning rate is lr * batch_size (25..50).  The first couple of steps throw the
hidden weights and biases so far that every hidden unit's pre-activation is negative for every
image (the pixels are non-negative, so one large negative update to a column of W1 / b1 kills a
unit for all inputs).  All 256 ReLUs are dead, the output is just b2, which keeps bouncing
around under the huge effective step: the loss never gets below the level of the first steps.

ORIGIN
------
"relu" -- the hidden ReLU module, whose units all die.

Fix
---
fixed=True uses ``l.mean().backward()`` (the d2l branch for torch optimizers); same lr=0.1,
init, data and batch size.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "relu"
SOURCE = ("d2l.ai 5.2 MLP from scratch + train_epoch_ch3 (sum vs mean loss branch for custom "
          "updater vs torch.optim); d2l forum 'loss stuck after switching to torch.optim.SGD'")


class MLPScratch(nn.Module):
    def __init__(self, num_inputs, num_outputs, num_hiddens, sigma=0.01):
        super().__init__()
        self.W1 = nn.Parameter(torch.randn(num_inputs, num_hiddens) * sigma)
        self.b1 = nn.Parameter(torch.zeros(num_hiddens))
        self.W2 = nn.Parameter(torch.randn(num_hiddens, num_outputs) * sigma)
        self.b2 = nn.Parameter(torch.zeros(num_outputs))
        self.relu = nn.ReLU()
        self.num_inputs = num_inputs

    def forward(self, X):
        X = X.reshape((-1, self.num_inputs))
        H = self.relu(X @ self.W1 + self.b1)
        return H @ self.W2 + self.b2


def _fashion_mnist_like(g, n_batches, bs, side, n_cls):
    base = torch.randn(n_cls, 1, side // 4, side // 4, generator=g)
    templ = nn.functional.interpolate(base, size=(side, side), mode="bilinear", align_corners=False)
    templ = (templ > 0.3).float() * 0.8
    out = []
    for _ in range(n_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templ[y] * (0.6 + 0.6 * torch.rand(bs, 1, 1, 1, generator=g))
        x = (x + 0.25 * torch.rand(bs, 1, side, side, generator=g)).clamp(0, 1)   # ToTensor(): [0, 1]
        out.append((x, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(52 + seed)
    num_hiddens = [256, 128, 512][seed % 3]
    bs = [256, 128, 512][seed % 3]
    lr = [0.1, 0.2, 0.1][seed % 3]
    side, n_cls, steps = 28, 10, 80

    torch.manual_seed(seed)
    model = MLPScratch(side * side, n_cls, num_hiddens)
    batches = _fashion_mnist_like(g, steps, bs, side, n_cls)
    ce = nn.CrossEntropyLoss(reduction="none")

    def loss_fn(y_hat, y):
        l = ce(y_hat, y)
        return l.mean() if fixed else l.sum()

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
