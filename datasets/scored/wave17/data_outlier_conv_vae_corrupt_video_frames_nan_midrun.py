"""Convolutional VAE (Gaussian decoder, summed-MSE reconstruction + KL, BatchNorm-free) trained
with Adam on 16x16 frames extracted from videos.

Mechanism: one mid-run batch contains frames from a truncated video whose decoder returned
NaN-filled buffers (the frame reader converts a failed decode to float and NaN survives the
/255 scaling). The NaN input makes the loss NaN, backward writes NaN into every gradient and Adam
copies it into every weight, so every later step is NaN too. ORIGIN is None: no module is at
fault, the data is. Fix: drop the non-finite frames from that batch (isfinite filter in the
data loader).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "VAE/autoencoder training on video frames where a corrupt/truncated clip yields NaN frames; loss becomes NaN mid-epoch and never recovers"


class ConvVAE(nn.Module):
    def __init__(self, c, z):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, c, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(c, 2 * c, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten())
        self.fc_mu = nn.Linear(2 * c * 16, z)
        self.fc_logvar = nn.Linear(2 * c * 16, z)
        self.fc_dec = nn.Linear(z, 2 * c * 16)
        self.dec = nn.Sequential(nn.ConvTranspose2d(2 * c, c, 4, 2, 1), nn.LeakyReLU(0.2), nn.ConvTranspose2d(c, 1, 4, 2, 1), nn.Sigmoid())
        self.c = c

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.fc_mu(h), self.fc_logvar(h)
        zs = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        xr = self.dec(self.fc_dec(zs).view(-1, 2 * self.c, 4, 4))
        return xr, mu, logvar


def vae_loss(out, x):
    xr, mu, logvar = out
    rec = F.mse_loss(xr, x, reduction="sum") / x.shape[0]
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.shape[0]
    return rec + kl


def _frames(g, n):
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    cx = torch.rand(n, 1, 1, generator=g) * 10 + 3
    cy = torch.rand(n, 1, 1, generator=g) * 10 + 3
    r = torch.rand(n, 1, 1, generator=g) * 2 + 2
    img = torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r ** 2))
    return (img + 0.02 * torch.randn(n, 16, 16, generator=g)).clamp(0, 1).unsqueeze(1)


def build(seed, fixed=False):
    cfg = [dict(c=8, z=8, lr=1e-3, bs=32, bad=70), dict(c=12, z=4, lr=2e-3, bs=16, bad=45), dict(c=6, z=16, lr=1e-3, bs=48, bad=95)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ConvVAE(cfg["c"], cfg["z"])
    steps = 120
    batches = []
    for i in range(steps):
        x = _frames(g, cfg["bs"])
        if i == cfg["bad"]:
            x[: cfg["bs"] // 4] = float("nan")
            if fixed:
                x = x[torch.isfinite(x).flatten(1).all(1)]
        batches.append((x, x))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=vae_loss, batches=batches, steps=steps)
