"""DDPM (Ho et al. 2020) epsilon-prediction with a small conv U-Net (down/up path with skip
concat, GroupNorm, SiLU, sinusoidal timestep embedding added per block) on 8x8 images, linear beta
schedule, MSE, SGD with momentum 0.9.

Mechanism: the lr was "scaled linearly with batch size" from a recipe tuned at batch size 4
(lr 0.05), giving lr = 0.05 * bs / 4 = 0.5..0.8. With momentum 0.9 the effective step is ~10x
that; the first updates overshoot, the conv weights grow by orders of magnitude, the eps-MSE
explodes and the run goes to inf/NaN within a few steps. ORIGIN None: the optimizer step
size. Fix: keep the un-scaled lr 0.05.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Goyal et al. linear lr scaling rule misapplied to a small DDPM U-Net with SGD+momentum; NaN loss reports"


def t_embed(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half) / half)
    a = t[:, None].float() * freqs[None]
    return torch.cat([torch.sin(a), torch.cos(a)], 1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.n1 = nn.GroupNorm(4, cin)
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2 = nn.GroupNorm(4, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, te):
        h = self.c1(F.silu(self.n1(x))) + self.t(te)[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return h + self.skip(x)


class UNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.inp = nn.Conv2d(1, c, 3, padding=1)
        self.d1 = ResBlock(c, c, c)
        self.down = nn.Conv2d(c, 2 * c, 3, 2, 1)
        self.mid = ResBlock(2 * c, 2 * c, c)
        self.up = nn.ConvTranspose2d(2 * c, c, 4, 2, 1)
        self.u1 = ResBlock(2 * c, c, c)
        self.out = nn.Sequential(nn.GroupNorm(4, c), nn.SiLU(), nn.Conv2d(c, 1, 3, padding=1))

    def forward(self, x, t):
        te = t_embed(t, self.c)
        h1 = self.d1(self.inp(x), te)
        h = self.mid(self.down(h1), te)
        h = self.u1(torch.cat([self.up(h), h1], 1), te)
        return self.out(h)


def build(seed, fixed=False):
    cfg = [dict(c=16, bs=40), dict(c=24, bs=48), dict(c=12, bs=64)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = UNet(cfg["c"])
    T = 1000
    abar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, T), 0)
    yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
    steps = 100
    batches = []
    for _ in range(steps):
        n = cfg["bs"]
        r = torch.randint(1, 4, (n, 1, 1), generator=g).float()
        x0 = (((xx - 3.5) ** 2 + (yy - 3.5) ** 2) < r ** 2 + 1).float().unsqueeze(1) * 2 - 1
        t = torch.randint(0, T, (n,), generator=g)
        eps = torch.randn(n, 1, 8, 8, generator=g)
        a = abar[t].view(n, 1, 1, 1)
        batches.append(((a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps))
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 0.05 * cfg["bs"] / 4, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps)
