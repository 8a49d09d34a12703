"""All-Convolutional Net (Springenberg et al.: strided convs instead of pooling, global average
pooling head), BN-free, trained with Adam.

Mechanism: the user switches the SGD recipe to Adam but keeps the SGD lr=5e-2 and no warmup. Adam's first
updates have size ~lr on every weight regardless of the gradient scale; summed over a 3x3xC fan-in
that shifts each pre-activation of the strided conv layers by far more than its spread. Within the
first steps the last conv stack's units are pushed below zero for every input and never come back;
the class scores become a constant (only the head's bias gets gradient) and the loss stays at the
chance level.
ORIGIN: net.3, the ReLU after the first strided conv (first layer found fully dead).
Fix: lr=1e-3 (Adam's usual default); nothing else changes.
"""
import torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.3"
SOURCE = "Springenberg et al. 2015 All-CNN-C; PyTorch reimplementations switching SGD(0.01) to Adam(lr=0.01) without warmup: 'accuracy stuck at 10%'"


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, bs, lr, steps = [(16, 16, 5e-2, 80), (24, 12, 5e-2, 70), (12, 20, 5e-2, 90)][seed % 3]
    if fixed:
        lr = 1e-3
    ncls, S = 5, 16
    model = nn.Sequential()
    net = nn.Sequential(
        nn.Conv2d(3, w, 3, padding=1), nn.ReLU(),
        nn.Conv2d(w, w, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(),
        nn.Conv2d(2 * w, 2 * w, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(2 * w, ncls, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    model.add_module("net", net)
    templ = torch.rand(ncls, 3, S, S, generator=g)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, ncls, (bs,), generator=g)
        img = (0.6 * templ[y] + 0.4 * torch.rand(bs, 3, S, S, generator=g) - 0.5) / 0.25
        batches.append((img, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
