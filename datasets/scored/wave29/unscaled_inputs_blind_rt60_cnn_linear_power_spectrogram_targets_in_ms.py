"""Blind RT60 estimator (2-D CNN) fed linear-power spectrograms and regressing RT60 in milliseconds.

Mechanism: a reverberation-time estimator (small Conv2d stack over a time-frequency
representation -> global average pooling -> Linear, MSE loss, SGD + momentum) is trained on
the raw STFT power of int16-scale recordings (values from ~1e-2 up to ~1e6, no log, no
normalisation) against RT60 labels in milliseconds (200-1200).  The predictions are already
in the hundreds to thousands and the MSE is ~1e5-1e7 at step 0; the weight gradients are
proportional to (error x input power), so the very first SGD step moves the conv weights by
many orders of magnitude more than their size, and the next forward pass overflows: the loss
is inf/NaN from step 1.

ORIGIN: None -- the model is sound; the problem is the scale of the inputs (and targets) it is
given, not a module.

Fix: log-compress and standardise the features (global mean/std of log10 power) and standardise
the targets ((ms - 700) / 300); same model, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("blind RT60 estimation CNNs (Gamper & Tashev 2018; ACE challenge) need log-spectral "
          "inputs; forum threads on regression losses going NaN when fed raw STFT power and "
          "targets in ms")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(15000 + seed)
    ch = [16, 24, 12][seed % 3]
    depth = [3, 2, 4][seed % 3]
    bs = [16, 24, 12][seed % 3]
    lr = [0.01, 0.02, 0.015][seed % 3]
    n_bands, T, hop_s, steps = 24, 48, 0.016, 120

    t = torch.arange(T).float() * hop_s
    batches = []
    for _ in range(steps):
        rt60 = 0.2 + 1.0 * torch.rand(bs, 1, 1, generator=g)                       # seconds
        band_tilt = 1.0 + 0.3 * torch.linspace(-1, 1, n_bands).view(1, -1, 1)     # HF decays faster
        onset = torch.randint(2, 8, (bs,), generator=g)
        env = torch.zeros(bs, n_bands, T)
        for b in range(bs):
            tt = (t - t[onset[b]]).clamp_min(0)
            env[b] = 10 ** (-6 * tt.view(1, -1) / (rt60[b] / band_tilt[0]))
            env[b, :, :onset[b]] = 1e-4
        gain = 10 ** (3 + 3 * torch.rand(bs, 1, 1, generator=g))                   # int16-scale power
        power = gain * env * (0.5 + torch.rand(bs, n_bands, T, generator=g)) + 1e-2
        y = rt60.view(bs, 1) * 1000.0                                               # ms
        if fixed:
            x = (torch.log10(power) - 2.5) / 2.0
            y = (y - 700.0) / 300.0
        else:
            x = power
        batches.append((x.unsqueeze(1), y))

    torch.manual_seed(seed)
    layers, c = [], 1
    for _ in range(depth):
        layers += [nn.Conv2d(c, ch, 3, padding=1), nn.ReLU()]
        c = ch
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(ch, 1))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
