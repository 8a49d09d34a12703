"""CREPE-style monophonic pitch estimator (Kim et al. 2018: raw 1024-sample frames -> strided 1D
conv stack with BN/ReLU/max-pool -> sigmoid over pitch bins trained with BCE against a
Gaussian-blurred one-hot target), trained with fp16 autocast and a GradScaler, Adam.

Looks alarming but is healthy: the GradScaler starts at a large scale (init_scale=2**24 as in
some AMP recipes), so the scaled gradients overflow fp16 for the first several steps; each of
those steps is skipped (no parameter update) and the scale is halved, so the loss is flat and
inf gradients are seen at the start. Once the scale is small enough the run trains normally.
ORIGIN is None. The `fixed` flag changes nothing.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "marl/crepe pitch CNN with Gaussian-blurred BCE targets; torch AMP GradScaler(init_scale=2**24) skipped steps"

N_BIN, FRAME, SR = 60, 512, 8000


def _batch(g, n):
    cents = 20 * torch.arange(N_BIN).float()  # 20-cent bins above fmin
    fmin = 110.0
    b = torch.randint(2, N_BIN - 2, (n,), generator=g).float() + torch.rand(n, generator=g) - 0.5
    f0 = fmin * 2 ** (20 * b / 1200)
    t = torch.arange(FRAME).float() / SR
    ph = torch.rand(n, 1, generator=g) * 6.28
    wav = torch.sin(2 * math.pi * f0.view(n, 1) * t + ph) + 0.5 * torch.sin(4 * math.pi * f0.view(n, 1) * t + ph)
    wav = wav + 0.1 * torch.randn(n, FRAME, generator=g)
    wav = (wav - wav.mean(1, keepdim=True)) / wav.std(1, keepdim=True)
    target = torch.exp(-((cents - 20 * b.view(n, 1)) ** 2) / (2 * 25.0 ** 2))
    return wav.unsqueeze(1), target


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 12][seed % 3]
    lr = [1e-3, 5e-4, 2e-3][seed % 3]
    bs = [32, 16, 24][seed % 3]
    steps = 80
    layers, ci = [], 1
    for i, (k, s) in enumerate([(64, 4), (16, 1), (16, 1), (16, 1)]):
        layers += [nn.Conv1d(ci, c * (1 + i // 2), k, stride=s, padding=k // 2 - 1),
                   nn.BatchNorm1d(c * (1 + i // 2)), nn.ReLU(), nn.MaxPool1d(2)]
        ci = c * (1 + i // 2)
    model = nn.Sequential(
        *layers, nn.AdaptiveAvgPool1d(4), nn.Flatten(), nn.Linear(4 * ci, N_BIN))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_batch(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu", init_scale=2.0 ** 24))
