"""Stimulus decoder for a V1 population: an MLP reads z-scored spike counts of ~100 orientation-
tuned neurons (von Mises tuning, Poisson noise) and classifies which of 12 grating orientations
was shown. Trained with SGD + Nesterov-free momentum 0.9 and cross-entropy.

Mechanism: the lr (0.4-0.6) was taken from a recipe for a BatchNorm'd network. The first steps
learn quickly (loss drops well below log 12), then one overshooting update produces huge logits;
the resulting cross-entropy gradient, amplified by momentum, drives the hidden biases and
incoming weights of the ReLU layers far negative. From then on every hidden unit of the last
ReLU layer is 0 for every trial, no gradient reaches anything below it, the output is a constant
and the loss sits at log(12) ~ 2.49 (the classic "loss stuck at ln(K)" dead-ReLU plateau). It
does not become non-finite at these lrs.

ORIGIN = "net.3": the ReLU after the last hidden Linear. It is the layer whose units are all
silenced (the first ReLU keeps firing, but once net.3 is dead no gradient reaches it); the
overshooting update lands hardest on the last hidden layer, which sits next to the exploding
logits.

Fix: lr 10x lower (0.05); same model, momentum, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.3"
SOURCE = ("Population decoding of orientation from V1 (e.g. Graf et al. 2011; Stringer et al. 2021); "
          "the common 'loss stuck at ln(num_classes), all ReLUs dead after a too-large SGD "
          "learning rate' report (PyTorch forums / StackOverflow)")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(8000 + seed)
    n = [120, 96, 144][seed % 3]
    hid = [128, 96, 160][seed % 3]
    depth = 2
    lr = [0.5, 0.4, 0.6][seed % 3]
    bs = [64, 48, 80][seed % 3]
    K = 12
    steps = 150
    pref = torch.rand(n, generator=g) * math.pi
    kappa = 1.5 + 2 * torch.rand(n, generator=g)
    peak = 10 + 20 * torch.rand(n, generator=g)

    def sample(m):
        c = torch.randint(0, K, (m,), generator=g)
        th = c.float() * math.pi / K
        r = 2 + peak * torch.exp(kappa * (torch.cos(2 * (th[:, None] - pref)) - 1))
        return torch.poisson(r * 0.3, generator=g), c

    cal, _ = sample(4000)
    mu, sd = cal.mean(0), cal.std(0) + 1e-3
    batches = []
    for _ in range(steps):
        x, c = sample(bs)
        batches.append(((x - mu) / sd, c))
    torch.manual_seed(seed)
    layers, d = [], n
    for _ in range(depth):
        layers += [nn.Linear(d, hid), nn.ReLU()]
        d = hid
    layers.append(nn.Linear(d, K))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
