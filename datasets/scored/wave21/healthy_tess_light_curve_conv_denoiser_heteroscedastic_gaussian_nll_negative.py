"""Healthy: 1D convolutional denoiser for TESS light curves trained with a heteroscedastic Gaussian NLL that goes negative.

What looks alarming: the loss is nn.GaussianNLLLoss on normalised flux with a predicted per-cadence
variance. Once the mean is fitted the network shrinks the predicted variance below 1 and the NLL
crosses zero and keeps decreasing to clearly negative values (about -1 to -2.5). Negative,
still-decreasing loss is correct for a density on continuous data (log-variance term), not a bug;
the predicted variance is floored by `eps`, so it does not collapse to 0.

ORIGIN: None (healthy run).  Fix: none needed.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "TESS/Kepler light-curve denoising with heteroscedastic Gaussian likelihood (e.g. Kendall & Gal 2017 aleatoric uncertainty); torch.nn.GaussianNLLLoss docs"


class LCDenoiser(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, c, 9, padding=4), nn.GELU(),
            nn.Conv1d(c, c, 9, padding=8, dilation=2), nn.GELU(),
            nn.Conv1d(c, c, 9, padding=16, dilation=4), nn.GELU(),
        )
        self.mu = nn.Conv1d(c, 1, 1)
        self.logvar = nn.Conv1d(c, 1, 1)

    def forward(self, x):
        h = self.net(x)
        return torch.cat([self.mu(h), self.logvar(h)], 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 12][seed % 3]
    T = [256, 192, 320][seed % 3]
    bs = [16, 12, 16][seed % 3]
    steps = [100, 80, 120][seed % 3]
    lr = [2e-3, 3e-3, 2e-3][seed % 3]
    t = torch.arange(T).float()
    batches = []
    for _ in range(steps):
        period = 40 + 60 * torch.rand(bs, 1, generator=g)
        phase = torch.rand(bs, 1, generator=g) * period
        depth = 0.5 + 1.5 * torch.rand(bs, 1, generator=g)
        in_transit = (((t[None] + phase) % period) < 6).float()
        star = 0.5 * torch.sin(2 * torch.pi * t[None] / (200 + 100 * torch.rand(bs, 1, generator=g)))
        clean = star - depth * in_transit
        sigma = 0.1 + 0.25 * torch.rand(bs, 1, generator=g)  # per-star photometric noise
        noisy = clean + sigma * torch.randn(bs, T, generator=g)
        batches.append((noisy[:, None], clean[:, None]))
    model = LCDenoiser(c)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    nll = nn.GaussianNLLLoss(eps=1e-4)

    def loss_fn(out, target):
        mu, logvar = out[:, :1], out[:, 1:]
        return nll(mu, target, logvar.exp())

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
