"""Tiny DDPM U-Net (sinusoidal time embedding -> MLP, FiLM-style time injection into ResBlocks,
one down/up level with a skip) trained with the epsilon-prediction MSE objective.
Bug: the images are uint8 pixels cast to float (0..255) and fed to q_sample without /127.5 - 1, so
x_t = sqrt(abar) x0 + sqrt(1-abar) eps is dominated by a 0..255 signal; the network output and the
eps-MSE are huge from step 0 and the run never gets near the fixed loss.
fixed=True: the same pixels scaled to [-1, 1] (x / 127.5 - 1) before noising; nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("DDPM (Ho et al. 2020) / denoising-diffusion-pytorch: images must be normalised to [-1, 1]; "
          "recurring issue reports where ToTensor/normalisation is skipped and raw 0..255 pixels are noised")

T_DIFF = 200
C, HW = 1, 8


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    a = t.float()[:, None] * freqs[None]
    return torch.cat([a.sin(), a.cos()], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.norm1 = nn.GroupNorm(4, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(4, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(t)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class UNet(nn.Module):
    def __init__(self, ch=16, tdim=32):
        super().__init__()
        self.tdim = tdim
        self.time_mlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.conv_in = nn.Conv2d(C, ch, 3, padding=1)
        self.down1 = ResBlock(ch, ch, tdim)
        self.downsample = nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1)
        self.mid = ResBlock(2 * ch, 2 * ch, tdim)
        self.upsample = nn.ConvTranspose2d(2 * ch, ch, 2, stride=2)
        self.up1 = ResBlock(2 * ch, ch, tdim)
        self.norm_out = nn.GroupNorm(4, ch)
        self.conv_out = nn.Conv2d(ch, C, 3, padding=1)

    def forward(self, x, t):
        te = self.time_mlp(timestep_embedding(t, self.tdim))
        h0 = self.conv_in(x)
        h1 = self.down1(h0, te)
        h = self.mid(self.downsample(h1), te)
        h = self.up1(torch.cat([self.upsample(h), h1], dim=1), te)
        return self.conv_out(F.silu(self.norm_out(h)))


def make_images(g, n):
    # synthetic 8x8 "glyphs": a bright bar/blob at a random place on a dark background, uint8
    yy, xx = torch.meshgrid(torch.arange(HW), torch.arange(HW), indexing="ij")
    cy = torch.randint(1, HW - 1, (n, 1, 1), generator=g).float()
    cx = torch.randint(1, HW - 1, (n, 1, 1), generator=g).float()
    r = 1.0 + 1.5 * torch.rand(n, 1, 1, generator=g)
    img = 230.0 * torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r ** 2)) + 15.0
    img = img + 8.0 * torch.randn(n, HW, HW, generator=g)
    return img.clamp(0, 255).to(torch.uint8)[:, None]


def make_batches(seed, steps, fixed, B=32):
    g = torch.Generator().manual_seed(seed)
    betas = torch.linspace(1e-4, 0.02, T_DIFF)
    abar = torch.cumprod(1 - betas, dim=0)
    batches = []
    for _ in range(steps):
        x0 = make_images(g, B).float()          # 0..255
        if fixed:
            x0 = x0 / 127.5 - 1.0               # the fix: scale to [-1, 1]
        t = torch.randint(0, T_DIFF, (B,), generator=g)
        eps = torch.randn(x0.shape, generator=g)
        a = abar[t][:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        batches.append(((xt, t), eps))
    return batches


def loss_fn(out, eps):
    return F.mse_loss(out, eps)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = UNet()
    steps = 150
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.0)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=make_batches(seed, steps, fixed),
                steps=steps, amp_dtype=None, scaler=None)
