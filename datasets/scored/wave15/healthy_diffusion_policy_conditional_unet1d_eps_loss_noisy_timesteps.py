"""Healthy: Diffusion Policy (Chi et al. 2023), reduced: a conditional 1D temporal U-Net with
FiLM conditioning on the observation and a sinusoidal diffusion-step embedding, trained with the
DDPM epsilon-prediction MSE on action chunks from demonstrations, AdamW.

Why it looks alarming: each batch draws its own diffusion timesteps, so the loss jumps by up to ~2x
between consecutive steps (batches dominated by small t are nearly unpredictable noise, large t
are easy); the per-step curve looks like noise around a slowly falling mean, with late
batches worse than much earlier ones.  The GroupNorm/Mish U-Net is well-conditioned and the mean loss
falls steadily: nothing is wrong.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("real-stanford/diffusion_policy ConditionalUnet1D + DDPMScheduler epsilon loss; the "
          "well-known very noisy diffusion training curve.")


def sinusoidal(t, dim):
    half = dim // 2
    f = torch.exp(-math.log(10000) * torch.arange(half).float() / half)
    a = t.float()[:, None] * f[None]
    return torch.cat([a.sin(), a.cos()], -1)


class CondResBlock(nn.Module):
    def __init__(self, cin, cout, cond_dim):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv1d(cin, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.Mish())
        self.conv2 = nn.Sequential(nn.Conv1d(cout, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.Mish())
        self.film = nn.Linear(cond_dim, 2 * cout)
        self.res = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, c):
        h = self.conv1(x)
        scale, bias = self.film(c).chunk(2, -1)
        h = h * (1 + scale[..., None]) + bias[..., None]
        return self.conv2(h) + self.res(x)


class CondUNet1D(nn.Module):
    def __init__(self, adim, odim, c):
        super().__init__()
        cond = 64
        self.t_emb = nn.Sequential(nn.Linear(32, cond), nn.Mish(), nn.Linear(cond, cond))
        self.o_emb = nn.Linear(odim, cond)
        self.down1 = CondResBlock(adim, c, cond)
        self.down2 = CondResBlock(c, 2 * c, cond)
        self.pool = nn.Conv1d(2 * c, 2 * c, 3, stride=2, padding=1)
        self.mid = CondResBlock(2 * c, 2 * c, cond)
        self.up = nn.ConvTranspose1d(2 * c, 2 * c, 4, stride=2, padding=1)
        self.up1 = CondResBlock(4 * c, c, cond)
        self.final = nn.Conv1d(c, adim, 1)

    def forward(self, noisy, t, obs):                  # noisy: B x T x A
        c = self.t_emb(sinusoidal(t, 32)) + self.o_emb(obs)
        x = noisy.transpose(1, 2)
        h1 = self.down2(self.down1(x, c), c)
        h = self.up(self.mid(self.pool(h1), c))
        return self.final(self.up1(torch.cat([h, h1], 1), c)).transpose(1, 2)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(c=32, T=16, A=2, lr=1e-3, bs=32, steps=120),
           dict(c=16, T=8, A=4, lr=2e-3, bs=64, steps=100),
           dict(c=24, T=16, A=3, lr=5e-4, bs=16, steps=150)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 101)
    K = 50
    betas = torch.linspace(1e-4, 0.2, K)
    abar = torch.cumprod(1 - betas, 0)
    model = CondUNet1D(cfg["A"], 6, cfg["c"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=1e-6)
    batches = []
    for _ in range(cfg["steps"]):
        obs = torch.randn(cfg["bs"], 6, generator=g)
        goal = torch.tanh(obs[:, :cfg["A"]])
        s = torch.linspace(0, 1, cfg["T"])[None, :, None]
        actions = goal[:, None] * s + 0.2 * torch.sin(6.28 * s + obs[:, -1:, None])   # demo chunk
        t = torch.randint(0, K, (cfg["bs"],), generator=g)
        eps = torch.randn(actions.shape, generator=g)
        a = abar[t][:, None, None]
        noisy = a.sqrt() * actions + (1 - a).sqrt() * eps
        batches.append(((noisy, t, obs), eps))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
