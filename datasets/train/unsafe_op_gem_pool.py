"""unsafe_op: generalized-mean (GeM) pooling written without its clamp, hit by a blank image.

Mechanism: a CNN classifier for image tiles (retrieval-style: a bias-free conv with ReLU, then
GeM pooling ``mean(x ** p) ** (1 / p)`` per channel with a learnable p, then a linear head),
trained with Adam or SGD + momentum on cross-entropy. The reference GeM clamps its input,
``x.clamp(min=eps)``; this one does not. That is harmless as long as every channel has some
positive activation somewhere in every image. It breaks at the first batch holding a blank tile
(all zeros: padding at the border of a slide or a scan that the tiler kept): the bias-free conv
and the ReLU map it to exactly 0, the channel means are exactly 0 and the forward pass is still
finite (0 ** (1/p) = 0, the loss of that step is finite), but the backward pass is not:
d(m ** (1/p))/dp = m ** (1/p) * log(m) * (-1/p**2) = 0 * (-inf) = NaN at m = 0, so the gradient
of p is NaN (the inf * 0 = NaN reaching the ReLU output is masked by the ReLU's backward, so the
conv weights stay finite). The optimizer writes NaN into p, and from the next step on every
pooled feature, logit and loss is NaN. Which step brings the blank tile depends on the seed.

ORIGIN: ``pool``, the GeM module holding the unsafe power (the conv outputs are finite zeros; the
first non-finite values are pool.p's gradient, then pool's output).
Fixed: the same model and data with the clamp of the reference implementation,
``x.clamp(min=1e-6)``, which keeps the power and its gradients finite at 0.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "pool"
SOURCE = (
    "Radenovic, Tolias & Chum 2018, 'Fine-tuning CNN Image Retrieval with No Human Annotation' "
    "(GeM pooling; the cirtorch reference clamps x to eps before the power), and forum/issue "
    "reports of NaN gradients from GeM or x ** (1/p) at exactly zero activations."
)


class GeM(nn.Module):
    def __init__(self, p: float, eps: float) -> None:
        super().__init__()
        self.p = nn.Parameter(torch.tensor(p))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.eps:
            x = x.clamp(min=self.eps)
        return x.pow(self.p).mean(dim=(2, 3)).pow(1.0 / self.p)


class TileNet(nn.Module):
    def __init__(self, channels: int, kernel: int, classes: int, p: float, eps: float) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, kernel, padding=kernel // 2, bias=False), nn.ReLU())
        self.pool = GeM(p, eps)
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.features(x)))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([8, 12, 16])
    kernel = rng.choice([3, 5])
    size = rng.choice([10, 12, 16])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([16, 32, 48])
    steps = rng.choice([120, 150, 200])
    p = rng.choice([2.0, 3.0])
    optim = rng.choice(["adam", "momentum"])
    lr = rng.choice([3e-3, 1e-2]) if optim == "adam" else rng.choice([0.03, 0.1])
    blank_step = rng.randrange(int(0.25 * steps), int(0.75 * steps))

    g = torch.Generator().manual_seed(360_000 + seed)
    templates = torch.randn(classes, 1, size, size, generator=g)
    templates = nn.functional.avg_pool2d(templates, 3, stride=1, padding=1) * 2.0
    batches = []
    for step in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        shift = torch.randint(-2, 3, (2,), generator=g).tolist()
        x = torch.roll(templates[y], shifts=shift, dims=(2, 3))
        x = x + 0.7 * torch.randn(batch, 1, size, size, generator=g)
        row = int(torch.randint(0, batch, (1,), generator=g))
        if step == blank_step:
            x[row] = 0.0  # a blank tile (in both runs: the data is not the problem)
        batches.append((x, y))

    torch.manual_seed(seed)
    model = TileNet(channels, kernel, classes, p, eps=1e-6 if fixed else 0.0)
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
