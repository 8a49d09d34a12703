"""Overdrive-pedal emulation: a small causal conv front end (input filter + two conv layers with
PReLU) followed by a tanh "output stage" with a learnable drive, y = tanh(drive * z), trained on
DI -> pedal pairs with MSE and SGD + momentum.

Mechanism: the drive parameter is stored in dB in the config (`drive_db = 24`) but the module
multiplies by the stored value directly instead of by 10**(drive_db/20); on top of that the
intended default was 0 dB. With a gain of 24 the pre-activation is ~10x outside tanh's linear
range for almost every sample: the output is a square wave at +-1 while the target is a mildly
clipped signal at ~+-0.3, and tanh'(24 z) ~ 1e-6-1e-9 except in the few samples around zero
crossings. Gradients reaching the drive and every conv layer vanish, and the loss stays where it
started (finite) while the correctly staged model learns.

ORIGIN: `stage`, the tanh output stage whose units are saturated (everything upstream only
receives the vanishing gradient through it).

Fix: interpret the drive in dB and initialise it to 0 dB (unity gain) - nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "stage"
SOURCE = ("Gain-staging bug (dB parameter applied as a linear gain) in differentiable "
          "waveshaper / virtual-analog models; tanh saturation stops gradient flow "
          "(LeCun et al. 1998, Glorot & Bengio 2010); pedal models after Damskaegg et al. 2019 "
          "'Real-time modeling of audio distortion circuits with deep learning'.")


class TanhStage(nn.Module):
    def __init__(self, drive_db, db_param):
        super().__init__()
        self.drive = nn.Parameter(torch.tensor(float(drive_db)))
        self.db_param = db_param

    def forward(self, z):
        gain = 10 ** (self.drive / 20) if self.db_param else self.drive
        return torch.tanh(gain * z)


class PedalNet(nn.Module):
    def __init__(self, ch, k, fixed):
        super().__init__()
        self.k = k
        self.conv1 = nn.Conv1d(1, ch, k)
        self.act1 = nn.PReLU(ch)
        self.conv2 = nn.Conv1d(ch, ch, k)
        self.act2 = nn.PReLU(ch)
        self.proj = nn.Conv1d(ch, 1, 1)
        self.stage = TanhStage(0.0 if fixed else 24.0, db_param=fixed)

    def forward(self, x):
        h = self.act1(self.conv1(F.pad(x, (self.k - 1, 0))))
        h = self.act2(self.conv2(F.pad(h, (self.k - 1, 0))))
        return self.stage(self.proj(h))


def _pairs(g, B, T, sr=8000.0):
    t = torch.arange(T) / sr
    f0 = 110.0 * 2 ** (torch.randint(0, 24, (B, 1), generator=g) / 12.0)
    a = 0.2 + 0.5 * torch.rand(B, 1, generator=g)
    x = torch.zeros(B, T)
    for h in range(1, 4):
        x += (0.5 ** h) * torch.sin(2 * math.pi * h * f0 * t + 6.28 * torch.rand(B, 1, generator=g))
    x = a * x * torch.exp(-4.0 * t)
    y = 0.35 * torch.tanh(2.5 * (x - 0.3 * F.pad(x, (1, 0))[:, :-1]))
    return x.unsqueeze(1), y.unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(11000 + seed)
    ch = [8, 12, 16][seed % 3]
    k = [5, 3, 7][seed % 3]
    B = [8, 12, 6][seed % 3]
    lr = [0.05, 0.03, 0.08][seed % 3]
    steps = 120
    torch.manual_seed(seed)
    model = PedalNet(ch, k, fixed)
    batches = [_pairs(g, B, 800) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
