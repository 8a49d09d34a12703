"""Michael Nielsen's "Neural Networks and Deep Learning" network.py ported to PyTorch -- a
[784, h, 10] sigmoid network, quadratic cost on one-hot targets, mini-batch SGD with eta=2..4 --
where ``np.random.randn(y, x)`` was translated to ``torch.rand(y, x)`` (uniform [0, 1)) instead of
``torch.randn``.

Mechanism
---------
All weights and biases are now positive.  The inputs are MNIST-like pixels in [0, 1] with a few
hundred inked pixels, so every hidden pre-activation is a sum of ~200 positive terms (~+50):
every hidden sigmoid outputs exactly 1.0 for every image, sigma'(z) = 0 in float32.  The output
layer then sums h ones with positive weights (~+10..20): all ten output sigmoids are pinned at
1 as well.  The quadratic cost multiplies the error by sigma'(z_out) = 0, the hidden layer passes
no gradient either, and the cost is frozen at 0.5 * 9 = 4.5 from the first step -- the
"learning slowdown" of saturated sigmoid neurons in its most extreme form.

ORIGIN
------
"1" -- the hidden nn.Sigmoid: it receives the huge all-positive pre-activations and is the first
unit to saturate (its constant output of 1 then saturates the output layer too).

Fix
---
fixed=True uses ``torch.randn`` as in the book (zero-mean N(0, 1) weights and biases); the
pre-activations are centred and the sigmoids leave saturation.  Cost, eta, sizes and data are
unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "1"
SOURCE = ("Nielsen, Neural Networks and Deep Learning, ch.1 network.py (np.random.randn init, "
          "quadratic cost, eta=3.0) ported to PyTorch with the rand/randn mix-up; ch.3 learning slowdown")


def _digits(g, n_batches, bs, side, n_cls):
    base = torch.randn(n_cls, 1, side // 4, side // 4, generator=g)
    strokes = nn.functional.interpolate(base, size=(side, side), mode="bilinear", align_corners=False)
    strokes = (strokes > 0.5).float()
    out = []
    for _ in range(n_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        ink = 0.6 + 0.4 * torch.rand(bs, 1, 1, 1, generator=g)
        x = strokes[y] * ink + 0.15 * torch.rand(bs, 1, side, side, generator=g) * strokes[y]
        x = x.clamp(0, 1).reshape(bs, -1)
        out.append((x, nn.functional.one_hot(y, n_cls).float()))   # vectorized_result(j)
    return out


def quadratic_cost(a, y):
    return 0.5 * ((a - y) ** 2).sum(dim=1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1989 + seed)
    hidden = [30, 40, 24][seed % 3]
    bs = [10, 20, 16][seed % 3]                 # mini_batch_size
    eta = [3.0, 2.0, 4.0][seed % 3]
    side, n_cls, steps = 28, 10, 150

    model = nn.Sequential(nn.Linear(side * side, hidden), nn.Sigmoid(),
                          nn.Linear(hidden, n_cls), nn.Sigmoid())
    init = torch.randn if fixed else torch.rand      # np.random.randn -> torch.rand (typo)
    with torch.no_grad():
        for lin in (model[0], model[2]):
            lin.weight.copy_(init(lin.weight.shape, generator=g))
            lin.bias.copy_(init(lin.bias.shape, generator=g))

    batches = _digits(g, steps, bs, side, n_cls)
    optimizer = torch.optim.SGD(model.parameters(), lr=eta)   # w -= eta/m * sum(nabla_w)
    return dict(model=model, optimizer=optimizer, loss_fn=quadratic_cost, batches=batches, steps=steps)
