"""DDPM eps-prediction MLP (denoising score matching) on 8-D data lying on a closed 1-D curve.
Blocks are Linear -> LayerNorm -> ReLU with no shortcut, and the 'zero-init the last norm of each
block' recipe (Goyal et al. 2017 / timm zero_init_last) sets every LayerNorm gain to 0: the norm
output is exactly 0, ReLU(0) = 0 with ReLU'(0) = 0, so all units are dead from step 0, no gradient
reaches a hidden weight, only the output bias learns and the MSE sits at the predict-zero level ~1.
fixed=True keeps the default LayerNorm init (gain 1); nothing else changes."""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.blocks.0.act"  # first ReLU whose input is identically 0
SOURCE = ("Goyal et al. 2017 'zero-gamma' / timm ResNet zero_init_last applied to a plain "
          "(shortcut-free) Linear-Norm-ReLU stack; same pitfall as zero-initialised layers followed "
          "by ReLU (ControlNet zero-conv discussion: learning needs a non-zero local gradient)")

D, T = 8, 200


class Block(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.norm = nn.LayerNorm(d_out)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.norm(self.fc(x)))


class EpsNet(nn.Module):
    def __init__(self, width=128, depth=3, temb=16, zero_init_last_norm=True):
        super().__init__()
        self.temb = temb
        dims = [D + temb] + [width] * depth
        self.blocks = nn.ModuleList([Block(a, b) for a, b in zip(dims[:-1], dims[1:])])
        self.out = nn.Linear(width, D)
        if zero_init_last_norm:
            for b in self.blocks:
                nn.init.zeros_(b.norm.weight)

    def time_embedding(self, t):
        half = self.temb // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half) / half)
        a = t.float().unsqueeze(1) * freqs
        return torch.cat([torch.sin(a), torch.cos(a)], 1)

    def forward(self, x_t, t):
        h = torch.cat([x_t, self.time_embedding(t)], 1)
        for b in self.blocks:
            h = b(h)
        return self.out(h)


class Denoiser(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.net = EpsNet(zero_init_last_norm=not fixed)

    def forward(self, x_t, t):
        return self.net(x_t, t)


def curve_data(n, g, P):
    u = 2 * math.pi * torch.rand(n, 1, generator=g)
    base = torch.cat([torch.cos(u), torch.sin(u), torch.cos(2 * u), torch.sin(3 * u)], 1)
    return base @ P


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 250, 128
    P = torch.randn(4, D, generator=g) / 2
    betas = torch.linspace(1e-4, 0.05, T)
    abar = torch.cumprod(1 - betas, 0)
    batches = []
    for _ in range(steps):
        x0 = curve_data(bs, g, P)
        t = torch.randint(0, T, (bs,), generator=g)
        eps = torch.randn(bs, D, generator=g)
        a = abar[t].unsqueeze(1)
        x_t = a.sqrt() * x0 + (1 - a).sqrt() * eps
        batches.append(((x_t, t), eps))
    model = Denoiser(fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
