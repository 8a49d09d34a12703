"""Fourier Neural Operator (FNO-1d) learning a Burgers-like solution operator u0 -> u(t) on random
smooth initial conditions.  After building the model the user applies a DCGAN-style
``weights_init`` (normal(0, 0.01) weights, zero biases) to every Linear/Conv1d.  With width 32 each
Fourier layer (tiny 1/(in*out) spectral weights + 0.01-std pointwise conv + GELU) multiplies the
signal by ~0.03, so activations and gradients shrink geometrically through the stack from step 0:
the lift output is already ~100x too small, the model output is ~1e-15, gradients sit far below
Adam's eps and the loss stalls at the target variance.
fixed=True: the custom init is not applied (PyTorch's default kaiming-uniform init is kept)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "lift"   # first layer given the tiny init; the shrinkage compounds through fourier.*
SOURCE = ("FNO-1d of Li et al. 2021 (neuraloperator reference SpectralConv1d) combined with the "
          "widespread DCGAN-style weights_init (N(0,0.01)/N(0,0.02), zero bias) applied via model.apply; "
          "vanishing-signal pattern of Glorot & Bengio 2010")

N_GRID, MODES, WIDTH, DEPTH = 64, 16, 32, 6


class SpectralConv1d(nn.Module):
    def __init__(self, cin, cout, modes, gen):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (cin * cout)  # reference FNO init
        self.weight = nn.Parameter(scale * torch.rand(cin, cout, modes, dtype=torch.cfloat, generator=gen))

    def forward(self, x):  # x: (B, C, N)
        xf = torch.fft.rfft(x)
        out = torch.zeros(x.shape[0], self.weight.shape[1], xf.shape[-1], dtype=torch.cfloat)
        out[:, :, :self.modes] = torch.einsum("bik,iok->bok", xf[:, :, :self.modes], self.weight)
        return torch.fft.irfft(out, n=x.shape[-1])


class FourierLayer(nn.Module):
    def __init__(self, width, modes, gen):
        super().__init__()
        self.spectral = SpectralConv1d(width, width, modes, gen)
        self.pointwise = nn.Conv1d(width, width, 1)

    def forward(self, x):
        return F.gelu(self.spectral(x) + self.pointwise(x))


class FNO1d(nn.Module):
    def __init__(self, gen):
        super().__init__()
        self.lift = nn.Linear(2, WIDTH)
        self.fourier = nn.ModuleList([FourierLayer(WIDTH, MODES, gen) for _ in range(DEPTH)])
        self.proj1 = nn.Linear(WIDTH, 64)
        self.proj2 = nn.Linear(64, 1)

    def forward(self, u0, grid):
        x = torch.stack([u0, grid], dim=-1)          # (B, N, 2)
        x = self.lift(x).permute(0, 2, 1)            # (B, W, N)
        for layer in self.fourier:
            x = layer(x)
        x = x.permute(0, 2, 1)
        return self.proj2(F.gelu(self.proj1(x))).squeeze(-1)


def weights_init(m):  # the bug: DCGAN-style small-normal init everywhere
    if isinstance(m, (nn.Linear, nn.Conv1d)):
        nn.init.normal_(m.weight, 0.0, 0.01)
        nn.init.zeros_(m.bias)


def _make_data(gen, n_batches, bs):
    k = torch.arange(N_GRID // 2 + 1, dtype=torch.float32)
    decay = torch.exp(-0.01 * k ** 2)
    grid = torch.linspace(0, 1, N_GRID).expand(bs, N_GRID)
    batches = []
    for _ in range(n_batches):
        coef = torch.randn(bs, N_GRID // 2 + 1, dtype=torch.cfloat, generator=gen) / (1 + k) ** 1.5
        coef[:, 0] = 0
        coef[:, 10:] = 0
        u0 = torch.fft.irfft(coef, n=N_GRID) * 20.0
        u1 = torch.fft.irfft(torch.fft.rfft(u0) * decay, n=N_GRID)
        u1 = u1 - 0.2 * torch.fft.irfft(1j * k * torch.fft.rfft(u1 ** 2) * decay, n=N_GRID) / N_GRID * 8
        batches.append(((u0, grid.clone()), u1))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = FNO1d(gen)
    if not fixed:
        model.apply(weights_init)
    steps = 150
    batches = _make_data(torch.Generator().manual_seed(1000 + seed), steps, 16)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
