"""bad_init in a small U-Net (conv encoder-decoder with skip concatenations), foreground masks.

Mechanism: a binary segmentation net for small grey-scale images (bright blobs on a noisy
background; the target is the blob mask). Two or three encoder levels (two 3x3 conv + ReLU each,
max-pool between levels), a bottleneck, and a decoder that upsamples, concatenates the encoder
map of the same level and applies two 3x3 conv + ReLU, then a 1x1 conv gives one logit per pixel
(BCE-with-logits). An init loop written for "weights ~ N(0, s^2)" draws every conv kernel with a
fixed std s = 0.4-0.6 instead of a fan-in-scaled one. For the first conv (one input channel,
fan_in = 9, kaiming std sqrt(2/9) = 0.47) that is about right, which is why such an init looks
harmless when one checks the first layer; every later conv has fan_in = 9 x channels = 72 to
over 1000, a kaiming std of 0.17 down to 0.04, so each multiplies the activation scale by
s / std_kaiming = 2.5-15x, geometrically with depth: the deepest path (encoder, bottleneck,
decoder) has 13-18 convs (transposed and output convs included) and at step 0 the logits are
1e4-1e13 instead of O(1). The skip concatenations do not save it: the shortest path (first
encoder level -> last decoder level) still has four oversized convs, and the decoder convs mix
the skip map with the (much larger) upsampled one. The BCE of such logits is linear in them
(1e4-1e13), its gradient grows by the same factors on the way back, and the first SGD-momentum
updates move the kernels by orders of magnitude: the loss goes to inf/NaN within a few steps
(which one depends on the seed's depth, width, std and lr).

ORIGIN: ``enc.0.2``, the second conv of the first encoder level: the first conv whose kernels
are far too large for its fan-in (the first conv, fan_in 9, is near its kaiming scale), where
the geometric growth starts; every conv after it multiplies the excess.
Fixed: the same architecture, data and optimizer with kaiming-normal (fan_in, ReLU) kernels and
zero biases, the init the network was designed for.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "bad_init"
ORIGIN = "enc.0.2"
SOURCE = (
    "He et al. 2015 (Delving Deep into Rectifiers: with a fixed-std Gaussian init, deep ReLU "
    "nets' responses grow or shrink geometrically with depth) applied to Ronneberger et al. "
    "2015's U-Net; forum reports of U-Nets whose loss is NaN from the first iterations after a "
    "custom weights_init using normal_(0, std) on every Conv2d."
)


def _double_conv(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(c_out, c_out, 3, padding=1),
        nn.ReLU(),
    )


class UNet(nn.Module):
    def __init__(self, width: int, levels: int) -> None:
        super().__init__()
        chans = [width * 2**i for i in range(levels)]
        self.enc = nn.ModuleList()
        c_in = 1
        for c in chans:
            self.enc.append(_double_conv(c_in, c))
            c_in = c
        self.pool = nn.MaxPool2d(2)
        self.mid = _double_conv(chans[-1], chans[-1] * 2)
        self.up = nn.ModuleList()
        self.dec = nn.ModuleList()
        c_below = chans[-1] * 2
        for c in reversed(chans):
            self.up.append(nn.ConvTranspose2d(c_below, c, 2, stride=2))
            self.dec.append(_double_conv(2 * c, c))
            c_below = c
        self.out = nn.Conv2d(chans[0], 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for block in self.enc:
            x = block(x)
            skips.append(x)
            x = self.pool(x)
        x = self.mid(x)
        for up, dec, skip in zip(self.up, self.dec, reversed(skips), strict=True):
            x = dec(torch.cat([up(x), skip], dim=1))
        return self.out(x)


def _data(seed: int, steps: int, batch: int, size: int) -> list:
    """Bright blobs (1-3 ellipses of random size and position) on a smooth noisy background;
    the target is the mask of the blobs. Images are standardised."""
    g = torch.Generator().manual_seed(410_000 + seed)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    batches = []
    for _ in range(steps):
        mask = torch.zeros(batch, 1, size, size)
        for b in range(batch):
            n = int(torch.randint(1, 4, (1,), generator=g))
            for _ in range(n):
                cy, cx = (torch.rand(2, generator=g) * size).tolist()
                ry, rx = (1.5 + torch.rand(2, generator=g) * size / 5).tolist()
                inside = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1.0
                mask[b, 0] = torch.maximum(mask[b, 0], inside.float())
        bg = nn.functional.avg_pool2d(
            torch.randn(batch, 1, size, size, generator=g), 3, stride=1, padding=1
        )
        x = 1.5 * mask + bg + 0.3 * torch.randn(batch, 1, size, size, generator=g)
        batches.append(((x - x.mean()) / x.std(), mask))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    levels = rng.choice([2, 3])
    width = rng.choice([8, 12, 16])
    size = 16 if levels == 2 else rng.choice([16, 24])
    batch = rng.choice([8, 12, 16])
    steps = rng.choice([80, 100, 120])
    std = rng.choice([0.4, 0.5, 0.6])  # the fixed std of the buggy init
    lr = rng.choice([0.01, 0.02])
    nesterov = rng.random() < 0.5

    torch.manual_seed(seed)
    model = UNet(width, levels)
    gen = torch.Generator().manual_seed(420_000 + seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
                if fixed:
                    # a stride-2, 2x2 transposed conv feeds each output pixel from one tap
                    # per input channel: its fan_in is in_channels
                    fan_in = m.weight[0].numel() if isinstance(m, nn.Conv2d) else m.in_channels
                    s = (2.0 / fan_in) ** 0.5  # kaiming normal, fan_in mode, ReLU gain
                    if m is model.out:
                        s = (1.0 / fan_in) ** 0.5  # linear output layer
                else:
                    s = std
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * s)
                m.bias.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=nesterov)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.BCEWithLogitsLoss(),
        "batches": _data(seed, steps, batch, size),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
