"""fast.ai "deep learning from the foundations" style MLP: weights made with torch.randn, no fan-in scale.

Mechanism
---------
In the fast.ai part-2 notebooks (02_fully_connected) the first version of the network builds its
weights as ``w1 = torch.randn(m, nh)``; only later the notebook shows that this makes the
activations explode and replaces it with ``torch.randn(m, nh) * math.sqrt(2. / m)`` (kaiming).
A student who wraps that early code into a deeper ``nn.Sequential`` of Linear/ReLU layers and
copies the ``randn`` initialisation into every layer gets a per-layer variance gain of about
fan_in/2 (32..64 here), so the logits are 1e4..1e8 at step 0.  The cross-entropy and its gradients
are astronomically large; the first SGD step throws the weights far away and the run goes to
inf/NaN within a few steps.

ORIGIN
------
"0" -- the first nn.Linear: it is the first layer with the unscaled randn weights, the point
where the activation scale starts to grow geometrically (every later layer multiplies it again).

Fix
---
Kaiming-normal scale: ``torch.randn(fan_in, fan_out) * sqrt(2 / fan_in)`` (fixed=True); nothing
else changes (same data, same depth, same SGD learning rate).
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "0"
SOURCE = ("fast.ai course part 2 (2019) notebook 02_fully_connected: 'w1 = torch.randn(m,nh)' "
          "explodes activations before the kaiming fix; forum threads on NaN loss when copying it into deeper nets")


def _make_data(g, n_batches, bs, d_in, n_cls):
    centres = torch.randn(n_cls, d_in, generator=g) * 1.2
    xs, ys = [], []
    for _ in range(n_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = centres[y] + torch.randn(bs, d_in, generator=g)
        xs.append(x)
        ys.append(y)
    allx = torch.cat(xs)
    mean, std = allx.mean(0), allx.std(0)          # normalise like x_train in the notebook
    return [((x - mean) / std, y) for x, y in zip(xs, ys)]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    depth = [5, 7, 9][seed % 3]          # number of hidden layers
    nh = [64, 96, 128][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = [0.05, 0.03, 0.02][seed % 3]
    d_in, n_cls, steps = 48, 10, 80

    dims = [d_in] + [nh] * depth + [n_cls]
    layers = []
    for i in range(len(dims) - 1):
        lin = nn.Linear(dims[i], dims[i + 1])
        w = torch.randn(dims[i], dims[i + 1], generator=g)      # like the notebook: (in, out)
        if fixed:
            w = w * math.sqrt(2.0 / dims[i])                       # kaiming init
        with torch.no_grad():
            lin.weight.copy_(w.t())
            lin.bias.zero_()
        layers.append(lin)
        if i < len(dims) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)

    batches = _make_data(g, steps, bs, d_in, n_cls)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
