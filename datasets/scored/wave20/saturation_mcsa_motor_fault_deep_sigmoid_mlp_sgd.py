"""Induction-motor fault classification from motor-current-signature-analysis (MCSA)
features (sideband amplitudes around the supply frequency for broken bars, eccentricity,
bearing and healthy classes) with a deep fully-connected network using nn.Sigmoid hidden
activations -- the 'classic' backprop-era topology still found in many condition-monitoring
papers and their PyTorch ports -- trained with SGD + momentum.

Mechanism: every hidden layer is followed by a sigmoid whose derivative is at most 0.25;
with 6-8 stacked sigmoid layers (and default init) the backpropagated gradient shrinks by
>4x per layer, the first layers receive essentially no gradient, the top layers see
nearly input-independent (saturated around 0.5 +- small) features and the cross-entropy
stays at ~ln(4) for the whole run.

ORIGIN: `net.1`, the first sigmoid, where the vanishing starts (its output carries the
features every later saturating layer squashes further).

Fix: ReLU instead of Sigmoid in the hidden layers (non-saturating activation).
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = "Vanishing gradients in deep sigmoid MLPs (Glorot & Bengio 2010); MCSA motor fault classifiers with sigmoid hidden layers"

_CFG = {0: dict(h=64, depth=6, lr=0.05, bs=32, steps=100),
        1: dict(h=48, depth=6, lr=0.06, bs=24, steps=120),
        2: dict(h=96, depth=6, lr=0.03, bs=48, steps=80)}


def _batch(g, n, f=16):
    y = torch.randint(0, 4, (n,), generator=g)
    proto = torch.randn(4, f, generator=torch.Generator().manual_seed(5))
    x = proto[y] + 0.7 * torch.randn(n, f, generator=g)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(71 + seed)
    act = nn.ReLU if fixed else nn.Sigmoid
    layers, cin = [], 16
    for _ in range(c["depth"]):
        layers += [nn.Linear(cin, c["h"]), act()]
        cin = c["h"]
    layers.append(nn.Linear(cin, 4))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=0.9)
    batches = [_batch(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=c["steps"])
