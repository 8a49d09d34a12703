"""Temporal convolutional network (dilated Conv1d stack, BN-free, global average pooling) for
sound-event classification on log-mel frames, SGD with momentum.

Mechanism: lr=1.0 copied from a BN-ResNet recipe with linear scaling; without normalisation the
updates are far larger than the weights (update/weight ratio >> 1e-3), the logits overshoot and the
loss explodes to inf/NaN within a few steps (or bounces at a level far above chance).
ORIGIN: None (a global optimiser setting).
Fix: lr=0.05.
"""
import torch, torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Bai et al. 2018 TCN / DCASE baselines; lr taken from a linear-scaled BN ResNet recipe"


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, bs, lr, steps = [(32, 16, 1.0, 60), (24, 24, 0.8, 80), (48, 12, 1.5, 50)][seed % 3]
    if fixed:
        lr = 0.05
    M, T, ncls = 20, 40, 5
    model = nn.Sequential(
        nn.Conv1d(M, w, 3, padding=1), nn.ReLU(),
        nn.Conv1d(w, w, 3, padding=2, dilation=2), nn.ReLU(),
        nn.Conv1d(w, w, 3, padding=4, dilation=4), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(w, ncls))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    protos = torch.randn(ncls, M, 1, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, ncls, (bs,), generator=g)
        batches.append((protos[y] + torch.randn(bs, M, T, generator=g), y))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
