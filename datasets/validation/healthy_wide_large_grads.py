"""healthy (hard negative): a wide-decoder autoencoder on a summed loss; large but stable gradients.

Nothing is wrong. An autoencoder in the style of PyTorch's VAE example (without the sampling)
reconstructs small binarised images (smooth grey mixtures of a few templates, binarised by
sampling each pixel, as for dynamically binarised MNIST) through a short code; its decoder has a
very wide hidden layer (2048-3072 ReLU units) before the output layer. As in that example, the
loss is binary cross-entropy on logits with ``reduction="sum"``: summed over pixels AND over the
batch, so the loss is in the thousands and every gradient is hundreds of times larger than with
a mean. The binarised pixels keep the per-pixel error of order 0.5 for the whole run, so the
gradient never shrinks away: the output layer fed by the wide layer has a gradient norm of 5e2-1e3
at every step (about 3e3 at step 0) and the total gradient norm stays at 1e3-3e3, above 1e3 on
most steps of every seed. Adam divides each update by the running gradient scale, so the step
size is set by the learning rate alone: no growth, no spikes, and the loss falls steadily by
25-45% towards the entropy floor of the images. A rule that flags a gradient norm above a fixed
threshold (such as 1e3) is wrong here: the scale comes from the loss reduction and the width,
not from an instability. Seeds change the image size, the width, the code size, the encoder, the
batch, the run length and the learning rate.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "pytorch/examples vae/main.py: F.binary_cross_entropy(recon_x, x, reduction='sum') summed "
    "over pixels and batch, trained with Adam at lr 1e-3, whose gradient norms are in the "
    "thousands while training is stable; Adam's update is invariant to the gradient scale "
    "(Kingma & Ba 2015)."
)


def _images(seed: int, steps: int, batch: int, side: int, n_templates: int) -> list:
    g = torch.Generator().manual_seed(260_000 + seed)
    coords = torch.linspace(-1.0, 1.0, side)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    centres = 1.6 * torch.rand(n_templates, 2, generator=g) - 0.8
    widths = 0.2 + 0.4 * torch.rand(n_templates, 1, 1, generator=g)
    templates = torch.exp(
        -((yy - centres[:, 0, None, None]) ** 2 + (xx - centres[:, 1, None, None]) ** 2)
        / (2 * widths**2)
    )
    templates = templates.flatten(1)
    batches = []
    for _ in range(steps):
        mix = torch.rand(batch, n_templates, generator=g) ** 3  # a few templates dominate
        grey = (mix @ templates).clamp(0.0, 1.0)
        img = torch.bernoulli(grey, generator=g)  # dynamic binarisation, as for binarised MNIST
        batches.append((img, img))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    side = rng.choice([14, 16])
    wide = rng.choice([2048, 3072])
    hidden = rng.choice([128, 192, 256])
    code = rng.choice([8, 12, 16])
    n_templates = rng.choice([6, 8, 10])
    batch = rng.choice([64, 96, 128])
    steps = rng.choice([100, 120, 150])
    lr = rng.choice([5e-4, 1e-3])

    batches = _images(seed, steps, batch, side, n_templates)
    d = side * side
    torch.manual_seed(seed)
    model = nn.Sequential()
    model.add_module("enc", nn.Linear(d, hidden))
    model.add_module("enc_act", nn.ReLU())
    model.add_module("code", nn.Linear(hidden, code))
    model.add_module("dec", nn.Linear(code, wide))  # the very wide hidden layer
    model.add_module("dec_act", nn.ReLU())
    model.add_module("out", nn.Linear(wide, d))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.BCEWithLogitsLoss(reduction="sum"),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
