"""PPG heart-rate regressor (small 1D CNN in the style of Reiss et al. 2019 / PPG-DaLiA CNNs:
conv-ReLU-pool blocks -> dense -> HR), no batch norm, z-scored PPG windows and z-scored HR
targets, MSE loss, momentum SGD.

Mechanism: the user copied the optimizer line from an ImageNet BN-ResNet recipe
(SGD lr=0.1..0.4, momentum 0.9). Without batch norm and with an unbounded MSE regression head,
the update/weight ratio is ~1 per step: the weights overshoot, each step amplifies the error and
the loss either diverges to inf/NaN or is thrown into a dead, constant-output regime far above
its starting value. ORIGIN is None: a global step-size error,
no single module. Fix: lr 0.01 (same optimizer, momentum and everything else).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "PPG-DaLiA CNN heart-rate estimation; SGD lr copied from torchvision ResNet recipe (0.1 x batch/256 scaling)"

FS, T = 32, 256


def _batch(g, n):
    hr = 60 + 100 * torch.rand(n, 1, generator=g)  # bpm
    t = torch.arange(T).float() / FS
    ph = torch.rand(n, 1, generator=g) * 6.28
    ppg = torch.sin(2 * math.pi * hr / 60 * t + ph) + 0.4 * torch.sin(4 * math.pi * hr / 60 * t + 2 * ph)
    ppg = ppg + 0.5 * torch.sin(2 * math.pi * 0.25 * t) + 0.3 * torch.randn(n, T, generator=g)  # resp. baseline + noise
    ppg = (ppg - ppg.mean(1, keepdim=True)) / ppg.std(1, keepdim=True)
    return ppg.unsqueeze(1), (hr - 110.0) / 29.0


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c, depth = [(16, 3), (24, 4), (12, 3)][seed % 3]
    lr_recipe = [0.4, 0.2, 0.8][seed % 3]   # 0.1 * batch/256 linear scaling with large batches
    bs = [64, 32, 48][seed % 3]
    steps = 120
    layers, ci = [], 1
    for i in range(depth):
        layers += [nn.Conv1d(ci, c * 2 ** i, 7, padding=3), nn.ReLU(), nn.MaxPool1d(2)]
        ci = c * 2 ** i
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool1d(4), nn.Flatten(),
                          nn.Linear(4 * ci, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else lr_recipe, momentum=0.9)
    batches = [_batch(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
