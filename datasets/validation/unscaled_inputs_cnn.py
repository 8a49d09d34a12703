"""unscaled_inputs: a CNN regressor fed raw 0-255 pixels and a raw-unit target (SGD, momentum).

Mechanism: a counting-style image regression (images of bright Gaussian blobs on a noisy
background; the target is the blobs' total brightness-weighted area, in raw pixel units, ~1e2 to
1e3) on a small LeakyReLU CNN. The images are converted with ``.float()`` but never divided by
255, and the target is not standardised. At step 0 the conv pre-activations are in the hundreds,
the prediction error is ~1e2-1e3 and the MSE loss ~1e4-1e5; the gradient of the first conv is
that error times inputs of ~255, so the first SGD updates overshoot by orders of magnitude and
the loss goes to inf/NaN within a few steps. (LeakyReLU, as in DCGAN-style nets: with ReLU the
overshoot often kills every unit and the head's bias then learns the target's mean, a failure
that hides behind a falling loss.)

ORIGIN is None: the cause is in the data pipeline (no scaling), before any module; the first
conv only receives it.
Fixed: the same model, optimizer and samples with the pixels divided by 255 and the target
standardised (z-score with the mean and std of the training targets).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = (
    "The 'forgot ToTensor()/255 normalisation' and 'regression target not scaled' bugs of "
    "PyTorch forum threads on CNN regression (e.g. counting or age estimation) whose loss is "
    "huge then NaN from the first iterations; torchvision's ToTensor scales to [0, 1] and "
    "targets are standardised."
)


def _blobs(g: torch.Generator, n: int, size: int, max_blobs: int) -> tuple:
    coords = torch.arange(size, dtype=torch.float32)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    img = torch.zeros(n, size, size)
    counts = torch.randint(1, max_blobs + 1, (n,), generator=g)
    for k in range(max_blobs):
        cy = torch.rand(n, 1, 1, generator=g) * size
        cx = torch.rand(n, 1, 1, generator=g) * size
        width = 0.8 + 1.2 * torch.rand(n, 1, 1, generator=g)
        amp = 0.5 + 0.5 * torch.rand(n, 1, 1, generator=g)
        on = (counts > k).float().view(n, 1, 1)
        img = img + on * amp * torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * width**2))
    img = img + 0.05 * torch.randn(n, size, size, generator=g)
    pixels = (255.0 * img.clamp(0.0, 1.0)).round()  # uint8 range, as read from disk
    target = pixels.sum(dim=(1, 2)) / 25.0  # brightness-weighted blob area, raw units
    return pixels.unsqueeze(1), target.unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    channels = rng.choice([4, 6, 8])
    size = rng.choice([10, 12, 14])
    max_blobs = rng.choice([3, 4, 5])
    batch = rng.choice([16, 32, 48])
    steps = rng.choice([120, 150, 180])
    lr = rng.choice([0.01, 0.02, 0.04])
    momentum = rng.choice([0.8, 0.9])

    g = torch.Generator().manual_seed(200_000 + seed)
    x_raw, y_raw = _blobs(g, steps * batch, size, max_blobs)
    if fixed:
        x = x_raw / 255.0
        y = (y_raw - y_raw.mean()) / y_raw.std()
    else:
        x, y = x_raw, y_raw
    batches = [
        (x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch]) for i in range(steps)
    ]

    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(1, channels, 3, padding=1),
        nn.LeakyReLU(0.2),
        nn.MaxPool2d(2),
        nn.Conv2d(channels, 2 * channels, 3, padding=1),
        nn.LeakyReLU(0.2),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(8 * channels, 1),
    )
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
