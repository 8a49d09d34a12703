"""Healthy run: a small DDPM (Ho et al. 2020) on a 2-D toy distribution (a
mixture of 8 Gaussians on a ring).  An MLP with a sinusoidal timestep
embedding predicts the noise eps from (x_t, t); t is drawn uniformly per
sample from a 100-step linear beta schedule, so the per-batch MSE is noisy
(large-t samples are easy, small-t samples are hard) -- that noise is normal.
fixed=True returns the identical run (nothing to fix).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("DDPM (Ho et al. 2020) epsilon-prediction objective; standard 2-D toy diffusion "
          "tutorials (e.g. 'tiny-diffusion', diffusers toy examples) with an MLP denoiser")

T_STEPS = 100
B = 256
TEMB = 32


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    ang = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(ang), torch.cos(ang)], dim=1)


class Denoiser(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.t_mlp = nn.Sequential(nn.Linear(TEMB, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.x_in = nn.Linear(2, hidden)
        self.net = nn.Sequential(
            nn.SiLU(), nn.Linear(hidden, hidden),
            nn.SiLU(), nn.Linear(hidden, hidden),
            nn.SiLU(), nn.Linear(hidden, 2),
        )

    def forward(self, x_t, t):
        h = self.x_in(x_t) + self.t_mlp(timestep_embedding(t, TEMB))
        return self.net(h)


def _batches(seed, steps):
    g = torch.Generator().manual_seed(900 + seed)
    betas = torch.linspace(1e-4, 0.02 * 1000 / T_STEPS, T_STEPS)
    abar = torch.cumprod(1.0 - betas, dim=0)
    out = []
    for _ in range(steps):
        k = torch.randint(0, 8, (B,), generator=g).float()
        centers = 2.0 * torch.stack([torch.cos(k * math.pi / 4), torch.sin(k * math.pi / 4)], 1)
        x0 = centers + 0.15 * torch.randn(B, 2, generator=g)
        t = torch.randint(0, T_STEPS, (B,), generator=g)
        eps = torch.randn(B, 2, generator=g)
        a = abar[t][:, None]
        x_t = a.sqrt() * x0 + (1 - a).sqrt() * eps
        out.append(((x_t, t), eps))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    steps = 300
    model = Denoiser()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=_batches(seed, steps),
                steps=steps, amp_dtype=None, scaler=None)
