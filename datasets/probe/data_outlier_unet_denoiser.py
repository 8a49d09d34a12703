"""data_outlier: a GroupNorm U-Net-lite diffusion denoiser (epsilon prediction with a
sinusoidal timestep embedding); one all-black frame in the dataset becomes a NaN image after
per-image standardisation and poisons the weights.

Model and data
    DDPM-style training on 16x16 grey 8-bit frames (blobs + gradients): T = 100 linear-beta
    steps, x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) eps, the model gets (x_t, t) and predicts
    eps with an MSE loss. U-Net-lite: conv_in, a ResBlock (GroupNorm -> SiLU -> conv, plus a
    projected timestep embedding), a stride-2 conv down, a middle ResBlock, a ConvTranspose2d
    up, a skip concatenation, a ResBlock and GroupNorm -> SiLU -> conv_out. AdamW lr 2e-3.
    The loader standardises each frame with its own statistics, (x - mean) / std, a common
    choice for camera frames with varying exposure.

Mechanism (measured, seeds 0/1/2)
    1. One frame of the 2400 is all black (a dropped camera frame, every pixel 0). Its
       per-image std is 0, so (0 - 0) / 0 = NaN in all 256 pixels; the noised input x_t of
       that sample is NaN while every other sample of the run is finite.
    2. Until that batch the run is healthy: the loss falls from ~1.1 to 0.23-0.30.
    3. At the faulty batch (step 97 / 108 / 44) the NaN sample passes through conv_in and
       GroupNorm; the MSE loss is NaN, AdamW writes NaN into every parameter, and every
       later loss is NaN.
    With the blank frame filtered out (fixed) the same batches train to 0.17-0.26
    (r = 0.32-0.38).

ORIGIN
    None: the fault is in the data (one corrupt sample), not in a module.

fixed=True
    Only the corrupt sample changes: the blank frame is dropped and replaced by the previous
    valid frame before standardisation (the filter a data check would apply); model, seed,
    noise and every other batch are identical.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("per-image standardisation of a constant (all-zero) image divides by std = 0: "
          "Project-MONAI/MONAI#1092 (NormalizeIntensity gives NaN for an all-zero image), "
          "pytorch/vision#589 (uniform image from a faulty load fed to Normalize), "
          "vanvalenlab/deepcell-toolbox#72 (epsilon added to the std)")


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    a = t.float()[:, None] * freqs[None]
    return torch.cat([a.sin(), a.cos()], 1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim, groups):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(groups, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.act = nn.SiLU()
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(self.act(self.norm1(x)))
        h = h + self.temb(temb)[:, :, None, None]
        h = self.conv2(self.act(self.norm2(h)))
        return h + self.skip(x)


class UNetLite(nn.Module):
    def __init__(self, ch, groups=8, tdim=64):
        super().__init__()
        self.tdim = tdim
        self.time_mlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.conv_in = nn.Conv2d(1, ch, 3, padding=1)
        self.down1 = ResBlock(ch, ch, tdim, groups)
        self.pool = nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1)
        self.mid = ResBlock(2 * ch, 2 * ch, tdim, groups)
        self.up = nn.ConvTranspose2d(2 * ch, ch, 4, stride=2, padding=1)
        self.up1 = ResBlock(2 * ch, ch, tdim, groups)
        self.norm_out = nn.GroupNorm(groups, ch)
        self.conv_out = nn.Conv2d(ch, 1, 3, padding=1)

    def forward(self, x, t):
        temb = self.time_mlp(timestep_embedding(t, self.tdim))
        h0 = self.down1(self.conv_in(x), temb)
        h = self.mid(self.pool(h0), temb)
        h = self.up1(torch.cat([self.up(h), h0], 1), temb)
        return self.conv_out(F.silu(self.norm_out(h)))


def _images(g, n, size):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    cx = torch.rand(n, 1, 1, generator=g) * size
    cy = torch.rand(n, 1, 1, generator=g) * size
    r = 2 + torch.rand(n, 1, 1, generator=g) * size / 3
    blob = (((xx - cx) ** 2 + (yy - cy) ** 2) < r ** 2).float()
    ang = torch.rand(n, 1, 1, generator=g) * math.pi
    grad = (xx * torch.cos(ang) + yy * torch.sin(ang)) / size
    img = 0.7 * blob + 0.3 * grad + 0.05 * torch.rand(n, size, size, generator=g)
    return (img * 255).round()  # 8-bit frames


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(4000 + seed)
    size, bs, steps, T = 16, 16, 150, 100
    N = bs * steps
    raw = _images(g, N, size)
    bad_step = int(torch.randint(30, 120, (1,), generator=g))
    bad_idx = bad_step * bs + int(torch.randint(0, bs, (1,), generator=g))
    raw[bad_idx] = 0.0  # an all-black frame (dropped camera frame)
    if fixed:
        raw[bad_idx] = raw[bad_idx - 1]  # filtered: the blank frame is replaced by a valid one
    # per-image standardisation, as in the loader
    mean = raw.mean((1, 2), keepdim=True)
    std = raw.std((1, 2), keepdim=True)
    x0 = ((raw - mean) / std)[:, None]
    betas = torch.linspace(1e-4, 0.02, T)
    abar = torch.cumprod(1 - betas, 0)
    t = torch.randint(0, T, (N,), generator=g)
    eps = torch.randn(N, 1, size, size, generator=g)
    a = abar[t][:, None, None, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    batches = [((xt[i*bs:(i+1)*bs], t[i*bs:(i+1)*bs]), eps[i*bs:(i+1)*bs]) for i in range(steps)]
    torch.manual_seed(seed)
    model = UNetLite([16, 24, 16][seed % 3])
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
