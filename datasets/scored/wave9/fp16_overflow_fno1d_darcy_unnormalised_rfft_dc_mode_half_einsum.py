"""1-D Fourier Neural Operator (Li et al. 2021) for steady Darcy flow -(a u')' = 1 on a fine
16384-point grid (high-resolution training for super-resolution use), with the piecewise-constant
permeability a(x) in {3, 12} fed as in the benchmark data. The spectral convolution follows the
common AMP-friendly port that splits the Fourier coefficients into real and imaginary parts and
mixes them with real einsums; torch.fft.rfft uses the default norm="backward", so the zero-frequency
coefficient of each lifted channel is the SUM over 16384 points of an O(1-5) value, i.e. tens of
thousands. Training runs under float16 autocast without a GradScaler: autocast casts the einsum
inputs to half, the DC coefficients of the larger channels exceed 65504 and become inf, inf - inf
in the complex product gives NaN, and the loss is non-finite from the very first step. The fix keeps
everything and runs the same autocast region in bfloat16 (same exponent range as float32)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "spectral.0"
SOURCE = "Li et al. 2021 FNO (neuraloperator); reports of NaN with AMP/fp16 in FNO spectral layers because of unnormalised FFT coefficients"

N, WIDTH, MODES, STEPS, BATCH = 16384, 16, 12, 40, 1


class SpectralConv1d(nn.Module):
    def __init__(self, c, modes):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (c * c)
        self.w_re = nn.Parameter(scale * torch.randn(c, c, modes))
        self.w_im = nn.Parameter(scale * torch.randn(c, c, modes))

    def forward(self, x):                                   # x: (B, C, N)
        x_ft = torch.fft.rfft(x.float())[..., :self.modes]  # norm="backward": DC = sum over grid
        xr, xi = x_ft.real, x_ft.imag
        o_re = torch.einsum("bim,iom->bom", xr, self.w_re) - torch.einsum("bim,iom->bom", xi, self.w_im)
        o_im = torch.einsum("bim,iom->bom", xr, self.w_im) + torch.einsum("bim,iom->bom", xi, self.w_re)
        out_ft = torch.zeros(x.shape[0], x.shape[1], x.shape[-1] // 2 + 1, dtype=torch.complex64)
        out_ft[..., :self.modes] = torch.complex(o_re.float(), o_im.float())
        return torch.fft.irfft(out_ft, n=x.shape[-1])


class FNO1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.lift = nn.Linear(2, WIDTH)
        self.spectral = nn.ModuleList([SpectralConv1d(WIDTH, MODES) for _ in range(3)])
        self.pointwise = nn.ModuleList([nn.Conv1d(WIDTH, WIDTH, 1) for _ in range(3)])
        self.proj = nn.Sequential(nn.Linear(WIDTH, 16), nn.GELU(), nn.Linear(16, 1))

    def forward(self, a, grid):
        h = self.lift(torch.stack([a, grid], -1)).transpose(1, 2)    # (B, C, N)
        for k, (sp, pw) in enumerate(zip(self.spectral, self.pointwise)):
            h = sp(h) + pw(h)
            if k < 2:
                h = F.gelu(h)
        return self.proj(h.transpose(1, 2)).squeeze(-1)


def _darcy(g, n):
    x = torch.linspace(0, 1, N)
    cuts = torch.sort(0.2 + 0.6 * torch.rand(n, 1, generator=g), dim=1).values
    seg = (x.view(1, 1, N) > cuts.unsqueeze(-1)).sum(1)              # phase index 0..1
    hi = torch.stack([torch.rand(n, generator=g) < 0.5], 1)
    hi = torch.cat([hi, ~hi], 1)
    a = torch.where(hi.gather(1, seg), 12.0, 3.0)
    # -(a u')' = 1, u(0)=u(1)=0  ->  a u' = C - x ;  u = int (C - x)/a
    dx = 1.0 / (N - 1)
    inv = 1.0 / a
    I1 = torch.cumsum(inv, 1) * dx
    Ix = torch.cumsum(x * inv, 1) * dx
    C = Ix[:, -1:] / I1[:, -1:]
    u = C * I1 - Ix
    u = u / 0.02                                                     # O(1) targets
    return a, x.expand(n, N).contiguous(), u


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11000 + seed)
    model = FNO1d()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    a, grid, u = _darcy(g, 40 * BATCH)
    batches = []
    for i in range(STEPS):
        j = i % 40
        sl = slice(j * BATCH, (j + 1) * BATCH)
        batches.append(((a[sl], grid[sl]), u[sl]))

    def loss_fn(pred, target):                 # relative L2 loss, as in the FNO reference code
        pred = pred.float()
        return ((pred - target).norm(dim=-1) / target.norm(dim=-1)).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
