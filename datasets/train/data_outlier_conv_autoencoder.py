"""data_outlier in a denoising convolutional autoencoder (Adam or RMSprop, MSE or L1).

Mechanism: a conv encoder (strided Conv2d + ReLU) and a ConvTranspose2d decoder learn to remove
noise from small grey-scale images; the run trains normally until one batch, at a seed-dependent
step in the middle of the run, carries one corrupt image: a pixel that is NaN (a truncated file
decoded into garbage) or +-inf (a per-image normalisation that divided by a zero range). The
image is both the clean target and, with noise, the input. The corrupt value flows through the
convolutions, the reconstruction and the loss become NaN/inf at that step, the backward pass
fills every gradient with NaN, and the Adam/RMSprop update writes NaN into every weight, so the
run never recovers.

ORIGIN is None: the failure starts in the input batch, not in a module.
Fixed: the same batches, with the corrupt image replaced by its clean values.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch forum threads 'autoencoder loss becomes NaN after some epochs' traced to one "
    "corrupt image in the dataset (a NaN/inf pixel from a bad file or a normalisation by a zero "
    "std); checking the data with torch.isfinite and dropping the sample fixes it."
)


def _images(g: torch.Generator, n: int, size: int) -> torch.Tensor:
    """Smooth random blobs in [0, 1]: a few Gaussian spots per image."""
    coords = torch.linspace(0.0, 1.0, size)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    img = torch.zeros(n, 1, size, size)
    for _ in range(3):
        cx = torch.rand(n, 1, 1, 1, generator=g)
        cy = torch.rand(n, 1, 1, 1, generator=g)
        w = 0.05 + 0.1 * torch.rand(n, 1, 1, 1, generator=g)
        img = img + torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * w**2))
    return img.clamp(max=1.0)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    size = rng.choice([16, 20, 24])
    width = rng.choice([8, 16, 24])
    latent = rng.choice([4, 8])
    batch = rng.choice([16, 32, 64])
    steps = rng.choice([150, 200, 250])
    optim = rng.choice(["adam", "rmsprop"])
    lr = rng.choice([1e-3, 2e-3]) if optim == "adam" else rng.choice([5e-4, 1e-3])
    loss_fn: nn.Module = rng.choice([nn.MSELoss(), nn.L1Loss()])
    noise = rng.choice([0.1, 0.2])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = rng.choice(["nan", "inf", "-inf"])

    g = torch.Generator().manual_seed(81_000 + seed)
    batches = []
    for step in range(steps):
        clean = _images(g, batch, size)
        row = int(torch.randint(0, batch, (1,), generator=g))
        py, px = (int(v) for v in torch.randint(0, size, (2,), generator=g))
        if step == bad_step and not fixed:
            clean = clean.clone()
            clean[row, 0, py, px] = float(kind)
        noisy = clean + noise * torch.randn(batch, 1, size, size, generator=g)
        batches.append((noisy, clean))

    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(1, width, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(width, latent, 3, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(latent, width, 4, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(width, 1, 4, stride=2, padding=1),
    )
    if optim == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": loss_fn,
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
