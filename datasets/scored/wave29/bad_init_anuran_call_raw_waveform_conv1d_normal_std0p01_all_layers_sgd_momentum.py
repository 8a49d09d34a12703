"""Frog-call (anuran) species classifier on raw waveform clips, every layer init N(0, 0.01).

Mechanism: a passive-acoustic-monitoring project classifies 1-s clips from autonomous recorders
into frog species with an end-to-end 1-D CNN on the raw waveform (no batch norm, as in early
raw-audio papers).  The author ports a Caffe-style ``weight_init`` that loops over all modules and
applies ``nn.init.normal_(m.weight, 0, 0.01)`` to every conv and linear layer.  For a conv with
fan-in C*k of 100-300 that gives a per-layer gain of 0.01*sqrt(fan_in/2) ~ 0.1, so after 6-8
layers the logits are ~1e-7 of the input scale: the softmax is exactly uniform, and the
gradients reaching every weight are multiplied by the same tiny factors on the way back.
SGD+momentum therefore barely moves anything; the loss sits at log(K) for the whole run.

ORIGIN: ``features.0`` -- the first convolution is where the signal starts shrinking
geometrically; each later layer repeats the same shrinkage.

Fix: default He/Kaiming initialisation for the ReLU convolutions (``kaiming_normal_``,
fan_in) and PyTorch's default for the classifier; same data, depth, optimiser and steps.
"""
import math

import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Caffe/torchvision-classifier style init loop normal_(0, 0.01) applied to all layers of a "
          "BN-free raw-waveform CNN (Dai et al. 2017 'Very deep CNNs for raw waveforms'); anuran "
          "call recognition as in the AnuraSet passive acoustic monitoring benchmark (Canas et al. 2023).")


class RawWaveCNN(nn.Module):
    def __init__(self, depth, width, n_cls):
        super().__init__()
        layers = [nn.Conv1d(1, width, 9, stride=3, padding=4), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Conv1d(width, width, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2)]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(width, n_cls)

    def forward(self, x):
        h = self.features(x.unsqueeze(1))
        return self.classifier(h.mean(-1))


def _clips(n, n_cls, length, sr, g):
    y = torch.randint(0, n_cls, (n,), generator=g)
    # each species: call carrier frequency, pulse rate and pulse duty cycle
    f0 = torch.linspace(300, 1300, n_cls)
    rate = torch.linspace(4, 30, n_cls)[torch.randperm(n_cls, generator=g)]
    t = torch.arange(length).float() / sr
    fj = f0[y][:, None] * (1 + 0.04 * torch.randn(n, 1, generator=g))
    rj = rate[y][:, None] * (1 + 0.05 * torch.randn(n, 1, generator=g))
    phase = torch.rand(n, 1, generator=g)
    env = (torch.sin(2 * math.pi * (rj * t + phase)) > 0.3).float()
    x = env * torch.sin(2 * math.pi * fj * t) + 0.4 * torch.randn(n, length, generator=g)
    x = x / x.std(dim=1, keepdim=True)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(7 + seed)
    torch.manual_seed(seed)
    depth = [6, 7, 8][seed % 3]
    width = [32, 24, 40][seed % 3]
    batch = [16, 24, 12][seed % 3]
    lr = [0.01, 0.012, 0.004][seed % 3]
    n_cls, length, sr, steps = 6, 1600, 8000, 150
    x, y = _clips(steps * batch, n_cls, length, sr, g)

    model = RawWaveCNN(depth, width, n_cls)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                if isinstance(m, nn.Conv1d):
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                    nn.init.zeros_(m.bias)
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
                nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps}
