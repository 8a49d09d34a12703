"""lr_too_high on a small ReLU CNN classifier trained with SGD: the updates overshoot, the loss
and gradients blow up for a few steps, and the ReLUs the blow-up pushes negative stay dead, so
the run stalls at (or far above) the chance-level loss.

Mechanism: a 2-3 block ReLU CNN (Kaiming-initialised 3x3 convs, optionally BatchNorm, max-pool,
global average pool) with a small ReLU MLP head classifies 5-10 classes of smooth random
templates under noise. The data, init and schedule are those of a healthy run; only the learning
rate is wrong, 100-500x the one that trains well. Far past the stability edge, single updates move
weight matrices by 1-1e4 times their own norm (a sane ratio is ~1e-3 to 1e-2): the logits and the
loss overshoot, and one of these updates drives the pre-activations of the head's hidden ReLU (and
of many conv channels) negative for every input. ReLU'(x < 0) = 0: those units receive no
gradient again, the logits stop depending on the input, and only the output bias still moves. The
loss then sits at about ln(C), or far above it when momentum and the huge lr keep throwing the
output bias around, until the end of the run; it never comes back down. The dead units are a
consequence, not the cause: with the same architecture and init a sane lr keeps the units alive
and trains to ~0.05.

Seeds vary the mechanism (seed % 3) as well as the sizes:
  * 0: BatchNorm CNN, SGD + momentum 0.9, constant lr 6-25 (sane 0.02-0.05). BatchNorm keeps the
    gradient norm small (~2) and most conv channels alive (12-38% dead at the end), but the step-1 update is 3.8x the
    weight norm; the head's ReLU is fully dead from step 9 and the loss, now a function of the
    output bias only, climbs from ln(10) = 2.30 to 11-17 as that bias oscillates.
  * 1: plain CNN (no normalisation), SGD + momentum 0.9, constant lr 1-3 (sane 0.01-0.02). The
    step-1 update is 17x the weight norm, the loss jumps to 18.5 at step 2, the gradient norm
    reaches 127 at step 11; the head ReLU is fully dead from step 14, with 100% of the last two
    conv layers' channels dead, and the loss sits at ln(5) = 1.61.
  * 2: plain SGD without momentum and a linear warmup (20-40 steps) to a peak lr 5-15 (sane
    0.05-0.1). The loss drifts down a little while the lr is small; once it passes the stability edge (step 17,
    lr ~3) the loss reaches 2.6e8 and the gradient norm 4.7e8 in one step, the head ReLU is dead
    from step 18, and the loss sits at ln(5).
Measured (mean loss of the last 10% of steps, unfixed vs fixed; no run goes non-finite): seed 0
11.4 vs 0.054, seed 1 1.72 vs 0.048, seed 2 1.63 vs 0.075.

ORIGIN is None: the fault is the optimizer's learning rate, shared by every layer, not a module.
Fixed: the same model, init, data, optimizer and schedule with the sane learning rate.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "CS231n notes (Neural Networks Part 1, 'dying ReLU'): with a learning rate set too high, a "
    "large gradient update can knock ReLU units into a region where they never activate again, "
    "and as much as 40% of a network can be dead; the same babysitting notes show the loss "
    "exploding at a too-high lr. Many PyTorch forum threads 'loss jumps then stays at ln(C), "
    "accuracy at chance' with SGD lr 1-10, fixed by lowering the lr 100x."
)


class ConvNet(nn.Module):
    def __init__(self, c_in: int, width: int, depth: int, n_classes: int, bn: bool) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        c = c_in
        for i in range(depth):
            c_out = width * (2 if i == depth - 1 else 1)
            layers.append(nn.Conv2d(c, c_out, 3, padding=1, bias=not bn))
            if bn:
                layers.append(nn.BatchNorm2d(c_out))
            layers.append(nn.ReLU())
            if i == 0:
                layers.append(nn.MaxPool2d(2))
            c = c_out
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(c, 2 * c), nn.ReLU(), nn.Linear(2 * c, n_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.features(x)))


def _data(seed: int, steps: int, batch: int, c_in: int, size: int, n_classes: int) -> list:
    """One smooth random template per class, scaled by a random amplitude, plus pixel noise."""
    g = torch.Generator().manual_seed(71_000 + seed)
    t = torch.randn(n_classes, c_in, size, size, generator=g)
    t = nn.functional.avg_pool2d(t, 3, stride=1, padding=1)
    t = t / t.flatten(1).std(dim=1).view(-1, 1, 1, 1)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_classes, (batch,), generator=g)
        amp = 0.6 + 0.8 * torch.rand(batch, 1, 1, 1, generator=g)
        x = amp * t[y] + 0.5 * torch.randn(batch, c_in, size, size, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    c_in = rng.choice([1, 3])
    size = rng.choice([12, 14, 16])
    width = rng.choice([8, 12, 16])
    depth = rng.choice([2, 3])
    n_classes = rng.choice([5, 8, 10])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([200, 220, 250])
    variant = seed % 3
    if variant == 0:    # BatchNorm CNN, SGD + momentum, constant lr
        bn, momentum, warmup = True, 0.9, 0
        sane_lr = rng.choice([0.02, 0.03, 0.05])
        factor = rng.choice([300, 400, 500])
    elif variant == 1:  # plain CNN, SGD + momentum, constant lr
        bn, momentum, warmup = False, 0.9, 0
        sane_lr = rng.choice([0.01, 0.02])
        factor = rng.choice([100, 150])
    else:               # plain SGD, linear warmup to a far too high peak
        bn, momentum, warmup = rng.choice([True, False]), 0.0, rng.choice([20, 30, 40])
        sane_lr = rng.choice([0.05, 0.1])
        factor = rng.choice([100, 150])
    lr = sane_lr if fixed else sane_lr * factor

    torch.manual_seed(seed)
    model = ConvNet(c_in, width, depth, n_classes, bn)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    if warmup:
        # Linear warmup to the peak; the scheduler steps after each optimizer step, as in a
        # usual training loop.
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup))
        opt.register_step_post_hook(lambda *_: sched.step())
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": _data(seed, steps, batch, c_in, size, n_classes),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
