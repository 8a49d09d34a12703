"""Wafer-map defect-pattern classification (WM-811K style: centre, edge-ring, scratch, none)
with a small BN-free VGG-style CNN (stacks of 3x3 convs + max-pool).

Mechanism: the user copied Caffe's `weight_filler { type: "gaussian" std: 0.01 }` into
PyTorch (nn.init.normal_(w, 0, 0.01) for every conv and linear).  For 3x3 convs with 8-32
input channels a std of 0.01 is ~10-20x smaller than He init, so each layer shrinks the
activation scale by ~0.05-0.1; after 8 weight layers the logits are ~1e-9 and all gradients
below the head are vanishingly small.  SGD sits at cross-entropy ln(4) for the whole run.

ORIGIN: `features.0`, the first conv, is where the geometric shrinking starts.

Fix: kaiming_normal_ init (fan_in, relu) with zero bias.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = "Caffe gaussian std=0.01 weight_filler copied into PyTorch VGG-style nets without BN (Simonyan & Zisserman note deep nets stall with this init); WM-811K wafer-map CNNs"

_CFG = {0: dict(w=8, lr=0.01, bs=32, steps=80),
        1: dict(w=12, lr=0.005, bs=24, steps=90),
        2: dict(w=6, lr=0.01, bs=40, steps=70)}


def _maps(g, n, s=24):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, s), torch.linspace(-1, 1, s), indexing="ij")
    r = (xx ** 2 + yy ** 2).sqrt()
    wafer = (r <= 1).float()
    y = torch.randint(0, 4, (n,), generator=g)
    x = torch.zeros(n, 1, s, s)
    for i in range(n):
        p = 0.05 * torch.rand(s, s, generator=g)
        if y[i] == 0:
            c = 0.35 + 0.2 * torch.rand(1, generator=g)
            p = p + (r < c).float() * 0.7
        elif y[i] == 1:
            p = p + ((r > 0.75) & (r <= 1)).float() * 0.7
        elif y[i] == 2:
            a = torch.rand(1, generator=g) * 3.14
            d = (xx * torch.sin(a) - yy * torch.cos(a)).abs()
            p = p + (d < 0.1).float() * 0.8
        fails = (torch.rand(s, s, generator=g) < p.clamp(0, 1)).float()
        x[i, 0] = wafer * (1 + fails)  # 0 off-wafer, 1 pass die, 2 fail die
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    w = c["w"]
    cfg = [w, w, "M", 2 * w, 2 * w, "M", 4 * w, 4 * w, "M"]
    layers, cin = [], 1
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [nn.Conv2d(cin, v, 3, padding=1), nn.ReLU()]
            cin = v
    model = nn.Sequential()
    model.add_module("features", nn.Sequential(*layers))
    model.add_module("flat", nn.Flatten())
    model.add_module("classifier", nn.Sequential(nn.Linear(cin * 9, 64), nn.ReLU(), nn.Linear(64, 4)))
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)  # Caffe gaussian filler std 0.01
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=0.9)
    batches = [_maps(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=c["steps"])
