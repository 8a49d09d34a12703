"""Visual quality inspection of cast impeller images (defective vs. OK, Kaggle 'casting
product image data' style, here 28x28 grey crops) with the original LeNet-5 topology:
Conv(5x5)-Sigmoid-AvgPool-Conv(5x5)-Sigmoid-AvgPool-FC-Sigmoid-FC-Sigmoid-FC (LeCun 1998 /
d2l.ai "LeNet" chapter), trained with Adam.

Mechanism: five stacked sigmoid nonlinearities (derivative <= 0.25) with default init:
the backpropagated gradient shrinks at each sigmoid, the FC sigmoids sit in a narrow band
around 0.5 that carries almost no input information, and even with Adam at a normal lr the
cross-entropy stays at ~ln(2) for the whole (short) run -- the well-known 'LeNet with sigmoid
does not train' symptom.

ORIGIN: `net.1`, the first sigmoid (after the first conv), where the saturating chain begins.

Fix: ReLU instead of Sigmoid (non-saturating activation); everything else unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = "d2l.ai LeNet chapter (sigmoid LeNet needs a very large lr / many epochs); casting product defect CNNs; Glorot & Bengio 2010 on sigmoid saturation"

_CFG = {0: dict(c1=6, c2=16, lr=2e-3, bs=32, steps=100),
        1: dict(c1=8, c2=16, lr=1e-3, bs=24, steps=120),
        2: dict(c1=6, c2=12, lr=3e-3, bs=48, steps=80)}


def _batch(g, n, s=28):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, s), torch.linspace(-1, 1, s), indexing="ij")
    r = (xx ** 2 + yy ** 2).sqrt()
    y = torch.randint(0, 2, (n,), generator=g)
    part = torch.exp(-((r - 0.55) ** 2) / 0.03)
    x = 0.2 + 0.6 * part + 0.05 * torch.randn(n, s, s, generator=g)
    for i in range(n):
        if y[i] == 1:  # blow-hole / burr defect: dark blob on the rim
            a = torch.rand(1, generator=g) * 6.28
            cx, cy = 0.55 * torch.cos(a), 0.55 * torch.sin(a)
            x[i] -= 0.9 * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 0.06)
    return x.unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2718 + seed)
    A = nn.ReLU if fixed else nn.Sigmoid
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(
        nn.Conv2d(1, c["c1"], 5, padding=2), A(), nn.AvgPool2d(2),
        nn.Conv2d(c["c1"], c["c2"], 5), A(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(c["c2"] * 25, 120), A(), nn.Linear(120, 84), A(), nn.Linear(84, 2)))
    opt = torch.optim.Adam(model.parameters(), lr=c["lr"])
    batches = [_batch(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=c["steps"])
