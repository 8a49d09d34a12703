"""1-D Fourier Neural Operator mapping an initial phase field u0(x) to the
Allen-Cahn solution u(x, T), with a tanh output head to keep the phase field
in [-1, 1].

Mechanism: the spectral convolution was written with
``torch.fft.rfft(x)`` (norm="backward": no scaling) but
``torch.fft.irfft(..., norm="forward")`` (copied from a port that used the
"forward" convention on *both* calls).  With "forward" on the inverse
transform nothing divides by N, so every Fourier layer multiplies the signal
on its spectral path by the grid size N (512-1024).  Three or four such
layers make the latent field orders of magnitude larger than intended (at
init, or after the first Adam steps have grown the spectral weights); the
projection feeding ``out_act`` (tanh) produces pre-activations in the hundreds,
tanh is pinned at exactly +-1 (its derivative is 0 in float32), and no
gradient reaches any layer.  The MSE sits at ~1.4 (outputs +-1 with the wrong
sign on much of the domain) for the rest of the run.

ORIGIN: ``out_act`` -- the tanh output unit that saturates (the oversized
pre-activations are produced upstream by the spectral layers).

Fix: a consistent FFT normalisation (default "backward" on both rfft and
irfft), which keeps the pre-activations of order one.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = ("Fourier Neural Operator (Li et al., ICLR 2021) reference SpectralConv1d; issues and "
          "forum threads on mixing torch.fft norm conventions ('forward' vs 'backward') when porting "
          "spectral layers, leading to exploding activations / a saturated bounded output")


class SpectralConv1d(nn.Module):
    def __init__(self, channels, modes, inverse_norm):
        super().__init__()
        self.modes, self.inverse_norm = modes, inverse_norm
        scale = 1.0 / (channels * channels)
        self.weight = nn.Parameter(scale * torch.rand(channels, channels, modes, dtype=torch.cfloat))

    def forward(self, x):  # (B, C, N)
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros_like(x_ft)
        out_ft[:, :, :self.modes] = torch.einsum("bix,iox->box", x_ft[:, :, :self.modes], self.weight)
        return torch.fft.irfft(out_ft, n=x.size(-1), norm=self.inverse_norm)


class FNO1d(nn.Module):
    def __init__(self, width, modes, layers, inverse_norm):
        super().__init__()
        self.lift = nn.Linear(2, width)
        self.spectral = nn.ModuleList([SpectralConv1d(width, modes, inverse_norm) for _ in range(layers)])
        self.pointwise = nn.ModuleList([nn.Conv1d(width, width, 1) for _ in range(layers)])
        self.proj = nn.Sequential(nn.Linear(width, 64), nn.GELU(), nn.Linear(64, 1))
        self.out_act = nn.Tanh()

    def forward(self, u0):  # (B, N)
        n = u0.size(-1)
        grid = torch.linspace(0, 1, n).expand(u0.size(0), n)
        x = self.lift(torch.stack([u0, grid], dim=-1)).permute(0, 2, 1)
        for i, (sc, pw) in enumerate(zip(self.spectral, self.pointwise)):
            x = sc(x) + pw(x)
            if i < len(self.spectral) - 1:
                x = F.gelu(x)
        return self.out_act(self.proj(x.permute(0, 2, 1)).squeeze(-1))


def allen_cahn(u0, eps, dt, n_steps):
    """Semi-implicit pseudo-spectral solver on the periodic unit interval."""
    n = u0.size(-1)
    k = 2 * math.pi * torch.fft.rfftfreq(n, d=1.0 / n)
    u = u0.clone()
    with torch.no_grad():
        for _ in range(n_steps):
            u_hat = (torch.fft.rfft(u) + dt * torch.fft.rfft(u - u ** 3)) / (1 + dt * eps ** 2 * k ** 2)
            u = torch.fft.irfft(u_hat, n=n)
    return u


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=24, modes=12, layers=3, n=1024, bs=8, lr=2e-3),
        dict(width=32, modes=16, layers=3, n=512, bs=8, lr=1e-3),
        dict(width=16, modes=8, layers=4, n=512, bs=20, lr=3e-3),
    ][seed % 3]
    g = torch.Generator().manual_seed(16000 + seed)
    steps, n = 100, cfg["n"]
    dx = 1.0 / n
    x = torch.arange(n) * dx
    n_samples = 128
    k = torch.arange(1, 7).float()
    amps = torch.randn(n_samples, 6, generator=g) / k
    ph = torch.rand(n_samples, 6, generator=g) * 2 * math.pi
    u0 = 0.3 * (amps[:, :, None] * torch.sin(2 * math.pi * k[None, :, None] * x + ph[:, :, None])).sum(1)
    uT = allen_cahn(u0, eps=0.02, dt=0.02, n_steps=100)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_samples, (cfg["bs"],), generator=g)
        batches.append((u0[idx], uT[idx]))

    torch.manual_seed(seed)
    model = FNO1d(cfg["width"], cfg["modes"], cfg["layers"], inverse_norm="backward" if fixed else "forward")
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
