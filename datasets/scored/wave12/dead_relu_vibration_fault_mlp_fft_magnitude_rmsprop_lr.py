"""Rotating-machine fault classifier (healthy, unbalance, misalignment, looseness, outer-race
bearing fault) on the FFT magnitude spectrum of one accelerometer record (128 bins), fed to a
ReLU MLP. Magnitude spectra are non-negative and not centred, so each first-layer unit sees
inputs of a single sign and every weight of a unit moves in the same direction under a large
step. RMSprop's first updates are ~lr/sqrt(1-alpha) = 10*lr per weight regardless of gradient
size; with lr=0.03 (the SGD learning rate of the previous training script, kept when the
optimiser was switched) the first few coherent steps (the loss spikes to ~100 at step 1) drive
the pre-activations of nearly every unit of the first hidden layer, and then of the second,
below zero for every spectrum. The dead units emit exact zeros, get no gradient, and the network
collapses to a constant output: the loss sits at ln(5) for the rest of the run with no NaN. The
fixed run uses lr=1e-3."""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("CWRU-bearing / machinery-fault MLPs on FFT spectra; dying-ReLU plateaus with "
          "non-negative inputs and an aggressive RMSprop learning rate (Keras default is 1e-3)")

FS, N, F_ROT = 2048.0, 256, 30.0


def record(g, cls):
    t = torch.arange(N, dtype=torch.float32) / FS
    f = F_ROT * (1 + 0.05 * float(torch.randn((), generator=g)))
    ph = lambda: 2 * math.pi * float(torch.rand((), generator=g))
    x = 0.3 * torch.sin(2 * math.pi * f * t + ph())
    if cls == 1:      # unbalance: strong 1x
        x = x + 1.2 * torch.sin(2 * math.pi * f * t + ph())
    elif cls == 2:    # misalignment: strong 2x (and some 3x)
        x = x + 0.9 * torch.sin(4 * math.pi * f * t + ph()) + 0.3 * torch.sin(6 * math.pi * f * t + ph())
    elif cls == 3:    # looseness: many harmonics
        for k in range(2, 9):
            x = x + 0.25 * torch.sin(2 * math.pi * k * f * t + ph())
    elif cls == 4:    # outer-race fault: impacts at BPFO exciting a ~600 Hz resonance
        bpfo = 3.6 * f
        for k in range(int(N / FS * bpfo) + 1):
            t0 = (k + float(torch.rand((), generator=g)) * 0.1) / bpfo
            x = x + 0.8 * torch.exp(-(t - t0).clamp(min=0) * 300) * (t >= t0) * torch.sin(2 * math.pi * 600 * (t - t0))
    x = x + 1.0 * torch.randn(N, generator=g)          # broadband machine noise
    mag = torch.fft.rfft(x * torch.hann_window(N)).abs()[1:129] / (N / 4)
    return mag


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    X = torch.stack([record(g, i % 5) for i in range(400)])
    Y = torch.arange(400) % 5
    model = nn.Sequential()
    model.add_module("mlp", nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 64),
                                          nn.ReLU(), nn.Linear(64, 5)))
    steps, bs = 150, 32
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, 400, (bs,), generator=g)
        batches.append((X[idx], Y[idx]))
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3 if fixed else 3e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
