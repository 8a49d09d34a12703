"""data_outlier in a ReLU CNN land-cover tile classifier: a few tiles carry an unnormalised band.

Setting: 3-band satellite tiles (reflectances in [0, 1], standardised per band with the dataset's
mean 0.25 and std 0.1, so the network sees values of order 1) are classified into 4-6 land-cover
classes by a small Conv-ReLU-MaxPool x2 + Linear-ReLU-Linear CNN under cross-entropy. Training
is calm (the loss falls from ~ln K to ~0.04-0.4) until one batch, at a seed-dependent step
between 30% and 70% of the run, carries 4-5 corrupt tiles cut from one bad scene (one tile per
land-cover class present in the batch):

* ``raw_dn`` (seeds 0, 3, ...; SGD + momentum or Nesterov): one band of each corrupt tile was
  read from a product that stores reflectance as 16-bit digital numbers (Sentinel-2 style,
  reflectance x 10000, or the full uint16 range, x 65535) and was never divided by its
  quantification value, so its values are ~1e3-6e4 where the rest of the batch is ~1: a finite
  outlier;
* ``unit_scale`` (seeds 2, 5, ...; SGD + momentum or Nesterov): one band of each corrupt tile
  was exported in other units by a different preprocessing path (x 1e6, values ~1e5-1e6): a
  finite outlier;
* ``nodata`` (seeds 1, 4, ...; Adam): the scene lies on the swath edge and every band right of
  a column holds the raster's nodata value, NaN, left unmasked (the one NaN seed).

Mechanism of the finite outliers (SGD seeds). A corrupt tile drives every activation downstream
of the first convolution to 1e4-1e6 times its usual size. Its logits are huge, its cross-entropy
is huge (~1e4-1e6), and since the gradient of each weight is (upstream gradient) x (its input
activation), every layer after the first gets a gradient 1e4-1e6 times the usual one (the first
layer too, on the corrupt band's filters). SGD multiplies that by the ordinary lr: the weights
move by units instead of thousandths, in a direction set by the corrupt tiles, and the momentum
buffer keeps pushing that way for the next ~10 steps; the loss of the next clean batches is
1e10-1e22. As a consequence either every ReLU unit of the second convolution and of the head
dies for clean tiles (their pre-activations are thrown far negative; the output is the last bias
alone, and the loss sits at the class-prior entropy, ~ln K, for the rest of the run: a finite
stall), or the weights are thrown so large that the clean batches keep giving huge logits and
gradients and the loss reaches inf/NaN, mostly 2-7 steps after the corrupt batch (rarely
dozens). Which of the two depends on the seed (seeds 0 and 2: dead units, a stall at ~ln 5).

Several corrupt tiles of different classes: with cross-entropy, a tile whose huge logit happens
to be its own class has a gradient of exactly zero (its softmax is one-hot and correct) and is
harmless; 4-5 tiles of different classes (two of them sharing a corrupt band, so pushed to the
same huge class) are practically never all right, so the outlier bites on every seed tried.

Why the Adam seed uses NaN: Adam divides each step by the running RMS of the gradient, so a
single finite 1e4-1e6 outlier moves each parameter by at most ~3 x lr and the run absorbs it
(measured while writing this family: a x1e4-x1e6 band under Adam at lr 1e-3-2e-3 ends at the
clean run's loss, and even a -FLT_MAX nodata strip broke only most inits, so such runs are no
reliable failure). The NaN nodata makes the logits, the loss and every gradient NaN at the
corrupt step, and the Adam update writes NaN into every weight.

ORIGIN is None: the failure starts in the input batch, not in a module.
Fixed: the same batches (same tiles, same order, same init, same optimizer and lr), with the
corrupt tiles replaced by their correctly standardised values. The fixed run trains to a low
loss (~0.04-0.4) and keeps most of its ReLU units alive.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum / GIS StackExchange threads 'loss explodes to NaN mid-epoch on satellite "
    "imagery' traced to one tile whose band was left as raw Sentinel-2 digital numbers "
    "(reflectance x 10000, not divided by the quantification value, or a band in other units) "
    "or whose NaN nodata pixels were not masked; normalising or dropping the bad tile fixes it."
)

MEAN, STD = 0.25, 0.1
SIG = 0.025  # class signal amplitude in reflectance units (noise std is 0.1)
NODATA = float("nan")  # a float raster whose nodata value is NaN, left unmasked


def _prototypes(g: torch.Generator, classes: int, size: int) -> torch.Tensor:
    """Smooth per-class band patterns (zero-mean, unit-std per class)."""
    p = torch.randn(classes, 3, size, size, generator=g)
    p = nn.functional.avg_pool2d(p, 5, stride=1, padding=2)
    p = p - p.mean(dim=(1, 2, 3), keepdim=True)
    return p / p.std(dim=(1, 2, 3), keepdim=True)


class TileNet(nn.Module):
    def __init__(self, channels: int, size: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(
            nn.Flatten(),
            nn.Linear(2 * channels * (size // 4) ** 2, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    size = rng.choice([12, 16])
    channels = rng.choice([8, 12, 16])
    hidden = rng.choice([32, 48, 64])
    classes = rng.choice([4, 5, 6])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([150, 180, 210])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = ["raw_dn", "nodata", "unit_scale"][seed % 3]
    n_bad = rng.choice([4, 5])
    scale = rng.choice([1e4, 65535.0]) if kind == "raw_dn" else 1e6
    if kind == "nodata":
        optim = "adam"
        lr = rng.choice([1e-3, 2e-3])
    else:
        optim = rng.choice(["sgd", "nesterov"])
        lr = rng.choice([0.01, 0.02, 0.03])

    g = torch.Generator().manual_seed(52_000 + seed)
    protos = _prototypes(g, classes, size)
    batches = []
    for step in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        amp = 0.5 + torch.rand(batch, 1, 1, 1, generator=g)
        refl = MEAN + SIG * amp * protos[y] + 0.1 * torch.randn(batch, 3, size, size, generator=g)
        refl = refl.clamp(0.0, 1.0)
        x = (refl - MEAN) / STD
        # the corrupt tiles come from one bad scene, which holds several land-cover classes:
        # one tile per distinct class, in batch order after a shuffle
        order = torch.randperm(batch, generator=g)
        seen: list[int] = []
        picked: list[int] = []
        for r in order.tolist():
            if int(y[r]) not in seen:
                seen.append(int(y[r]))
                picked.append(r)
        rows = torch.tensor(picked[:n_bad])
        bands = torch.randint(0, 3, (len(rows),), generator=g)
        px = int(torch.randint(0, size // 2, (1,), generator=g))
        if step == bad_step and not fixed:
            x = x.clone()
            if kind == "nodata":
                # a tile on the swath edge: every band is nodata right of column px
                x[rows, :, :, px:] = NODATA
            else:
                # one band per corrupt tile left as raw digital numbers / in other units
                x[rows, bands] = refl[rows, bands] * scale
        batches.append((x, y))

    torch.manual_seed(seed)
    model = TileNet(channels, size, hidden, classes)
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(
            model.parameters(), lr=lr, momentum=0.9, nesterov=(optim == "nesterov")
        )
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
