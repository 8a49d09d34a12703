"""HDR super-resolution (EDSR-lite residual blocks, mu-law tone-mapped L1 loss) trained
on linear-radiance crops read from half-float OpenEXR files.

Mechanism: one capture in the crop pool is a sky shot whose sun pixels exceeded the
half-float range when the EXR was written, so they are stored as +inf. The data
loader converts to float32 and crops randomly; the one batch that contains such a
crop carries +inf radiance in both the LR input and the HR target. The tone mapping
log(1 + mu*x) keeps inf, the conv stack turns inf-inf into NaN, and the L1 loss of
that batch is non-finite; every step before it is a calm, decreasing run.

ORIGIN: ``head`` - the first conv, the first module whose output is non-finite when
the corrupt crop arrives (the model itself is fine; the cause is the batch).

Fix: sanitise the crop in the loader (``nan_to_num`` + clamp radiance to the sensor
maximum, here 64), as HDR pipelines do before tone mapping; everything else unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "head"
SOURCE = ("HDR imaging / HDR-SR training code reading half-float EXRs (OpenEXR "
          "'HALF' channels overflow to inf for very bright sun/specular pixels); "
          "issues 'loss becomes nan at a random iteration' fixed by clamping/"
          "nan_to_num of the loaded radiance")

MU = 5000.0
MAX_RAD = 64.0


def tonemap(x):
    return torch.log1p(MU * x / MAX_RAD) / math.log1p(MU)


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1)
        self.c2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return x + 0.1 * self.c2(F.relu(self.c1(x)))


class EDSRLite(nn.Module):
    def __init__(self, width, n_blocks):
        super().__init__()
        self.head = nn.Conv2d(3, width, 3, padding=1)
        self.blocks = nn.Sequential(*[ResBlock(width) for _ in range(n_blocks)])
        self.up = nn.Conv2d(width, 3 * 4, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, lr_rad):
        t = tonemap(lr_rad)
        f = self.head(t)
        f = f + self.blocks(f)
        base = F.interpolate(t, scale_factor=2, mode="nearest")
        return base + self.shuffle(self.up(f))


def _hdr_crops(g, n, size):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size),
                            indexing="ij")
    img = torch.zeros(n, 3, size, size)
    for _ in range(3):
        cx = torch.rand(n, 1, 1, 1, generator=g)
        cy = torch.rand(n, 1, 1, 1, generator=g)
        s = torch.rand(n, 1, 1, 1, generator=g) * 0.2 + 0.05
        amp = torch.rand(n, 3, 1, 1, generator=g) ** 3 * 20
        img = img + amp * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * s * s))
    img = img + 0.05 + 0.3 * torch.rand(n, 3, 1, 1, generator=g)
    return img


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    width = [16, 24, 20][seed % 3]
    n_blocks = [2, 3, 2][seed % 3]
    bs = [6, 4, 8][seed % 3]
    bad_step = [47, 83, 121][seed % 3]
    steps = 160
    model = EDSRLite(width, n_blocks)
    opt = torch.optim.Adam(model.parameters(), lr=[1e-3, 8e-4, 1.2e-3][seed % 3])
    batches = []
    for t in range(steps):
        hr = _hdr_crops(g, bs, 16)
        if t == bad_step:
            # the sky crop: a small saturated sun disc stored as +inf in the half EXR
            k = int(torch.randint(0, bs, (1,), generator=g))
            hr[k, :, 5:8, 9:12] = float("inf")
        lr_rad = F.avg_pool2d(hr, 2)
        if fixed:   # loader-side sanitising of the radiance
            hr = torch.nan_to_num(hr, nan=0.0, posinf=MAX_RAD).clamp(0, MAX_RAD)
            lr_rad = torch.nan_to_num(lr_rad, nan=0.0, posinf=MAX_RAD).clamp(0, MAX_RAD)
        batches.append((lr_rad, hr))

    def loss_fn(pred_tm, hr_rad):
        return F.l1_loss(pred_tm, tonemap(hr_rad))

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
