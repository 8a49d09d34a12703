"""data_outlier in a small CNN image classifier (SGD with momentum, cross-entropy).

Mechanism: an ordinary image-classification run (smooth class templates, shifted and noisy,
standardised pixels) trains normally until one batch, at a seed-dependent step in the middle of
the run, carries a few images decoded from one corrupt file: each has a rectangular block of
pixels that is NaN (a failed decode, a NaN-filled tile) or garbage floats of random sign and
magnitude 1e20-1e30 (bytes read with the wrong dtype or from an uninitialised buffer). A NaN
block makes the logits and the loss NaN at once; a garbage block makes the conv outputs and the
logits ~1e20 or more, the gradients follow, and the next SGD updates send the weights to
inf/NaN within a step or two. (A block of merely ~1e6 is not reliably fatal here: cross-entropy
bounds the gradient per logit, so the net either absorbs it or loses its ReLUs and stalls;
that variant is left out so the label stays a clean non-finite failure.)

ORIGIN is None: the failure starts in the input batch, not in a module; the first conv only
receives it.
Fixed: the same batches, with the corrupt blocks replaced by the images' clean pixels.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum threads 'NaN loss appears suddenly in the middle of training a CNN' traced to "
    "corrupt images in the dataset (NaN pixels from a broken file, or garbage values from bytes "
    "read with the wrong dtype); filtering the images or checking torch.isfinite and a value "
    "range on each batch fixes it."
)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([4, 6, 8])
    size = rng.choice([10, 12, 14])
    classes = rng.choice([3, 4, 5])
    batch = rng.choice([16, 32, 48])
    steps = rng.choice([120, 150, 180])
    lr = rng.choice([0.01, 0.02, 0.03])
    two_blocks = rng.random() < 0.5  # one or two conv stages
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = rng.choice(["nan_block", "garbage_block"])
    block = rng.choice([3, 4, 5, 6])
    n_bad = max(2, batch // rng.choice([4, 8]))

    g = torch.Generator().manual_seed(140_000 + seed)
    templates = torch.randn(classes, 1, size, size, generator=g)
    templates = nn.functional.avg_pool2d(templates, 3, stride=1, padding=1) * 2.0
    batches = []
    for step in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        shift = torch.randint(-1, 2, (2,), generator=g).tolist()
        x = torch.roll(templates[y], shifts=shift, dims=(2, 3))
        x = x + torch.randn(batch, 1, size, size, generator=g)
        corners = torch.randint(0, size - block + 1, (batch, 2), generator=g).tolist()
        # Garbage floats (bytes read with the wrong dtype): random signs, magnitudes 1e20-1e30.
        garbage = torch.sign(torch.randn(batch, 1, block, block, generator=g)) * 10.0 ** (
            20.0 + 10.0 * torch.rand(batch, 1, block, block, generator=g)
        )
        if step == bad_step and not fixed:
            x = x.clone()
            for row in range(n_bad):  # the first n_bad images come from the corrupt file
                top, left = corners[row]
                patch = float("nan") if kind == "nan_block" else garbage[row]
                x[row, :, top : top + block, left : left + block] = patch
        batches.append((x, y))

    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
    width = channels
    if two_blocks:
        layers += [nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU()]
        width = 2 * channels
    layers += [nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(4 * width, classes)]
    model = nn.Sequential(*layers)
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
