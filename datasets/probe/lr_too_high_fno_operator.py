"""1D Fourier neural operator (Li et al. 2021) learning a reaction-diffusion solution operator,
trained with Adam at an SGD-sized lr of 0.15-0.2 instead of the reference 1e-3. Spectral weights
start at ~1e-3 scale, so each Adam step rewrites them by >100x their norm: the loss jumps to
1e3-1e6 in the first steps, the network collapses to a (near) spatially constant output and the
loss stalls at the target variance while lr=1e-3 cuts it ~1000x. fixed=True: lr=1e-3.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("zongyi-li/fourier_neural_operator fourier_1d.py (Adam lr=1e-3, spectral weights "
          "scale=1/(in*out)); SGD-sized lr reused with Adam: loss spikes, then plateaus at a "
          "constant prediction; update/weight ratio >> 1e-3 (CS231n babysitting heuristics)")

N_GRID = 64
STEPS = 200
BATCH = 32


class SpectralConv1d(nn.Module):
    def __init__(self, cin, cout, modes):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (cin * cout)
        # real/imag stored as a trailing dim of 2 (as in the original FNO release)
        self.weight = nn.Parameter(scale * torch.rand(cin, cout, modes, 2))

    def forward(self, x):  # x: (B, C, N)
        B, C, N = x.shape
        x_ft = torch.fft.rfft(x, dim=-1)
        w = torch.view_as_complex(self.weight)
        out_ft = torch.zeros(B, w.shape[1], N // 2 + 1, dtype=x_ft.dtype)
        out_ft[:, :, : self.modes] = torch.einsum("bix,iox->box", x_ft[:, :, : self.modes], w)
        return torch.fft.irfft(out_ft, n=N, dim=-1)


class FNOBlock(nn.Module):
    def __init__(self, width, modes):
        super().__init__()
        self.spec = SpectralConv1d(width, width, modes)
        self.pw = nn.Conv1d(width, width, 1)

    def forward(self, x):
        return F.gelu(self.spec(x) + self.pw(x))


class FNO1d(nn.Module):
    def __init__(self, width=32, modes=16, depth=4):
        super().__init__()
        self.lift = nn.Linear(2, width)
        self.blocks = nn.ModuleList([FNOBlock(width, modes) for _ in range(depth)])
        self.proj = nn.Sequential(nn.Linear(width, 128), nn.GELU(), nn.Linear(128, 1))

    def forward(self, u0):  # u0: (B, N)
        B, N = u0.shape
        grid = torch.linspace(0, 1, N).expand(B, N)
        h = self.lift(torch.stack([u0, grid], dim=-1)).transpose(1, 2)  # (B, W, N)
        for blk in self.blocks:
            h = blk(h)
        return self.proj(h.transpose(1, 2)).squeeze(-1)


def _solve(u0, T=0.5, nu=0.02, n_sub=20):
    """Split-step solver for u_t = nu*u_xx + u - u^3 on [0, 2pi) periodic."""
    N = u0.shape[-1]
    k = torch.fft.rfftfreq(N, d=1.0 / N)
    dt = T / n_sub
    decay = torch.exp(-nu * k ** 2 * dt)
    u = u0.clone()
    for _ in range(n_sub):
        u = torch.fft.irfft(torch.fft.rfft(u) * decay, n=N)
        u = u + dt * (u - u ** 3)
    return u


def _make_batch(g):
    x = torch.linspace(0, 2 * math.pi, N_GRID + 1)[:-1]
    n_modes = 6
    amps = torch.randn(BATCH, n_modes, 2, generator=g) / torch.arange(1, n_modes + 1).float().view(1, -1, 1)
    u0 = torch.zeros(BATCH, N_GRID)
    for m in range(n_modes):
        u0 = u0 + amps[:, m, :1] * torch.sin((m + 1) * x) + amps[:, m, 1:] * torch.cos((m + 1) * x)
    return u0, _solve(u0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    batches = [_make_batch(g) for _ in range(STEPS)]
    model = FNO1d()
    lr = 1e-3 if fixed else [0.15, 0.2][seed % 2]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=STEPS, amp_dtype=None, scaler=None)
