"""Noise-conditioned (EDM / NCSN-style) convolutional denoiser: inputs are a tuple (x_sigma, sigma),
the network gets c_in-scaled noisy images plus a learned embedding of log(sigma) added to its
GroupNorm/SiLU blocks, and is trained to predict the unit-variance noise (MSE ~1 at init). The
optimizer was switched to Adagrad with lr = 1.0, a value copied from a sparse linear-model recipe.
Adagrad's first step is lr * g / |g|, i.e. every single weight moves by ~1.0 on step 0 (and by
~0.7, 0.6, ... on the next steps): with weights of typical magnitude 0.05-0.2 each update is 5-20x the
weight itself, the output conv explodes, the loss jumps by orders of magnitude and never comes back
under its starting value in the run (no NaN; update/weight ratios ~1e0 instead of ~1e-3).
Fix: lr = 0.01."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Adagrad lr conventions (lr 0.1-1.0 in sparse/linear CTR recipes vs 1e-2 default); "
          "Karras et al. 2022 (EDM) preconditioning for the denoiser setup")


class Block(nn.Module):
    def __init__(self, cin, cout, emb):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm = nn.GroupNorm(4, cout)
        self.emb = nn.Linear(emb, cout)

    def forward(self, h, e):
        return F.silu(self.norm(self.conv(h)) + self.emb(e)[:, :, None, None])


class Denoiser(nn.Module):
    def __init__(self, c=24, emb=16, sigma_data=0.5):
        super().__init__()
        self.sigma_data = sigma_data
        self.sigma_embed = nn.Sequential(nn.Linear(1, emb), nn.SiLU(), nn.Linear(emb, emb))
        self.b1 = Block(1, c, emb)
        self.b2 = Block(c, c, emb)
        self.b3 = Block(c, c, emb)
        self.out = nn.Conv2d(c, 1, 3, padding=1)

    def forward(self, x_noisy, sigma):
        c_in = 1.0 / torch.sqrt(sigma ** 2 + self.sigma_data ** 2)
        e = self.sigma_embed(torch.log(sigma).view(-1, 1) / 4)
        h = self.b1(x_noisy * c_in.view(-1, 1, 1, 1), e)
        h = self.b2(h, e)
        h = self.b3(h, e) + h
        return self.out(h)


def _images(g, n, S=16):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, S), torch.linspace(0, 1, S), indexing="ij")
    img = torch.zeros(n, 1, S, S)
    for _ in range(2):
        fx = torch.randint(-2, 3, (n, 1, 1), generator=g).float()
        fy = torch.randint(-2, 3, (n, 1, 1), generator=g).float()
        ph = torch.rand(n, 1, 1, generator=g) * 2 * math.pi
        img[:, 0] += 0.35 * torch.cos(2 * math.pi * (fx * xx + fy * yy) + ph)
    return img


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Denoiser()
    data = _images(g, 256)
    steps, bs = 100, 16
    batches = []
    for s in range(steps):
        idx = torch.randint(0, data.shape[0], (bs,), generator=g)
        x0 = data[idx]
        sigma = torch.exp(torch.randn(bs, generator=g) * 0.8 - 1.0).clamp(0.05, 2.0)
        eps = torch.randn(x0.shape, generator=g)
        batches.append(((x0 + sigma.view(-1, 1, 1, 1) * eps, sigma), eps))
    opt = torch.optim.Adagrad(model.parameters(), lr=0.01 if fixed else 1.0)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
