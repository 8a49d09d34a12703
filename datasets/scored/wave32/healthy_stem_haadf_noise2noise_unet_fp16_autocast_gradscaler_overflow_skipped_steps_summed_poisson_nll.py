"""Noise2Noise denoiser for low-dose STEM-HAADF images: a small two-level U-Net is trained on pairs
of independent Poisson-noisy frames of the same scan region, with a summed Poisson NLL (log-rate
parameterisation) under float16 autocast and a working GradScaler.

Mechanism (healthy): the scaler starts at a large init_scale (2**24) and the loss is a SUM over
every pixel of the batch (thousands), so the first scaled backward passes overflow float16;
GradScaler detects the inf gradients, skips those optimizer steps (the weights do not change at
all: exactly-zero updates) and halves the scale until gradients fit. The loss is also large in
absolute value (summed) and the Poisson NLL without the log(y!) constant can be negative on
bright pixels. Training then proceeds normally and the denoiser learns. A naive monitor sees
inf gradients, zero steps and a big/negative loss; none of them is a fault.

ORIGIN: None (healthy run).
Fix: none needed; fixed=True builds the identical run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Lehtinen et al. 2018 Noise2Noise; PyTorch AMP docs (GradScaler skips steps whose "
          "gradients contain inf/NaN and backs off the scale); low-dose STEM denoising practice")


class SmallUNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        self.mid = nn.Sequential(nn.ReLU(), nn.Conv2d(2 * c, 2 * c, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(2 * c, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, 1, 1))

    def forward(self, x):
        e = self.enc1(x)
        m = self.mid(self.down(e))
        return self.dec(torch.cat([e, self.up(m)], 1))  # log-rate per pixel


def _lattice_images(g, n, size, dose):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    imgs = []
    for _ in range(n):
        a = 5.0 + 2.0 * torch.rand(1, generator=g).item()
        th = 3.1416 * torch.rand(1, generator=g).item()
        u = xx * torch.cos(torch.tensor(th)) + yy * torch.sin(torch.tensor(th))
        v = -xx * torch.sin(torch.tensor(th)) + yy * torch.cos(torch.tensor(th))
        img = (torch.cos(2 * 3.1416 * u / a) * torch.cos(2 * 3.1416 * v / a)).clamp_min(0) ** 2
        imgs.append(0.05 + img)
    clean = torch.stack(imgs).unsqueeze(1) * dose
    return clean


def summed_poisson_nll(log_rate, counts):
    log_rate = log_rate.float()
    return (torch.exp(log_rate) - counts * log_rate).sum()


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    c = [8, 12, 10][seed % 3]
    bs = [4, 6, 8][(seed + 2) % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    dose = [4.0, 6.0, 3.0][seed % 3]
    size, steps = 24, 120
    model = SmallUNet(c)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24)
    batches = []
    for _ in range(steps):
        clean = _lattice_images(g, bs, size, dose)
        noisy_in = torch.poisson(clean, generator=g)
        noisy_tgt = torch.poisson(clean, generator=g)
        batches.append((noisy_in / dose, noisy_tgt))
    return dict(model=model, optimizer=opt, loss_fn=summed_poisson_nll, batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=scaler)
