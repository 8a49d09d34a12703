"""Neuropixels cell-type classification: a deep ReLU MLP takes the mean spike waveform of a unit
(82 samples at 30 kHz, peak channel, amplitude-normalised) plus 4 summary features and predicts one
of 4 putative types (regular-spiking pyramidal, fast-spiking interneuron, axonal, bursting), trained
with cross-entropy and SGD with momentum.

Mechanism: every Linear is initialised with `nn.init.normal_(w, std=0.01)` (the Caffe/"gaussian
std 0.01" default that worked for shallow nets). With widths 64-128 each ReLU layer multiplies the
activation scale by ~0.01*sqrt(width/2) (~0.06-0.08), so after 6-8 layers the logits are ~1e-8 and
the back-propagated gradients shrink by the same factor: the loss sits at log(4) and does not move
(a stall, no non-finite value), while the same net with a fan-in init learns the classes.

ORIGIN: "net.0", the first Linear. The shrinkage starts there (its output is already ~20x too
small) and compounds through every following layer.

Fix: Kaiming-normal initialisation (fan_in, ReLU gain) with zero biases; everything else the same.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Caffe-style 'gaussian std 0.01' initialisation in deep plain nets (Simonyan & "
          "Zisserman 2014 needed pre-training for this reason; He et al. 2015 sec. 2.2); waveform "
          "based cell typing as in Jia et al. 2019 / Lee et al. 2021 (WaveMAP)")


def _waveform(kind, n, t, g):
    # trough at 0.3 ms, peak delay and widths differ between putative types
    trough_w = torch.tensor([0.12, 0.06, 0.05, 0.10])[kind] * (1 + 0.1 * torch.randn(n, generator=g))
    peak_d = torch.tensor([0.55, 0.25, 0.15, 0.45])[kind] * (1 + 0.1 * torch.randn(n, generator=g))
    peak_a = torch.tensor([0.35, 0.55, 0.15, 0.25])[kind] * (1 + 0.1 * torch.randn(n, generator=g))
    tr = -torch.exp(-0.5 * ((t[None] - 0.9) / trough_w[:, None]) ** 2)
    pk = peak_a[:, None] * torch.exp(-0.5 * ((t[None] - 0.9 - peak_d[:, None]) / (2 * trough_w[:, None])) ** 2)
    w = tr + pk + 0.05 * torch.randn(n, t.numel(), generator=g)
    return w


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 96, 128][seed % 3]
    depth = [6, 8, 7][seed % 3]
    batch = [64, 128, 96][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    steps = 150
    t = torch.arange(82) / 30.0  # ms

    layers, d = [], 82 + 4
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 4))
    torch.manual_seed(seed)
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)

    batches = []
    for _ in range(steps):
        kind = torch.randint(0, 4, (batch,), generator=g)
        w = _waveform(kind, batch, t, g)
        rate = torch.tensor([4.0, 18.0, 8.0, 6.0])[kind] * torch.exp(0.3 * torch.randn(batch, generator=g))
        cv2 = torch.tensor([0.9, 0.7, 1.0, 1.4])[kind] + 0.1 * torch.randn(batch, generator=g)
        feats = torch.stack([torch.log(rate) - 2.0, cv2 - 1.0, w.min(1).values + 1.0,
                             (w.argmax(1).float() - 40) / 20], 1)
        batches.append((torch.cat([w, feats], 1), kind))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps}
