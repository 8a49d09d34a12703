"""Diagonal linear state-space sequence model (S4D/LRU-like, convolutional mode) trained with too high a learning rate.

Mechanism
---------
Each of H channels runs N diagonal linear recurrences h_t = a * h_{t-1} + b * u_t,
y_t = sum_n c_n h_t,n, evaluated in parallel as a causal convolution with the
kernel K_k = sum_n c_n b_n a_n^k (k < L, L = 192-256) via FFT, as in S4D.
The decay ``a`` is a raw, unconstrained parameter initialised in U(0.3, 0.9).
The task needs long memory (the target is an exponential moving average of the
inputs with time constant ~50 steps plus a short-range term), so the gradient
pushes the slow modes toward a -> 1.

The optimizer is Adam at lr 0.15-0.2 (a value that "worked" for a small
MLP head).  Adam moves every parameter by ~lr per step regardless of scale, so
the update/weight ratio of the encoder/decoder weights (|w| ~ 0.2-0.5) is
~0.3-1, and the decays ``a`` (init <= 0.9) are pushed past 1 within 1-2 steps.
For a > 1 the kernel contains a^(L-1): with a = 1.2 and L = 256, a^255 ~ 1e20,
so outputs of ~1e15-1e20 appear immediately (loss 1e15..1e31 from step 1-2).
The huge gradients flip the sign of Adam's update but each step is still ~lr,
so the modes bounce around |a| > 1, the loss stays astronomically high and it
overflows float32 (inf) between step ~5 and ~60.  Nothing in the model is
numerically unsafe at a sane step size.

ORIGIN = None: the root cause is the optimizer's learning rate, not a module.

fixed=True: lr = 1e-3 (the S4 recommendation for state parameters), same
model, data, optimizer and init; the slow modes approach a ~ 0.98 without
crossing 1 and the loss falls from ~0.7-1.4 to ~0.01-0.02 in 200 steps.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("S4/S4D/LRU papers (Gu et al. 2022, Orvieto et al. 2023) note SSM state "
          "parameters need a reduced lr (<=1e-3) and stable parametrisations; "
          "'loss becomes nan when training S4/Mamba with higher lr' reports")


class DiagonalSSM(nn.Module):
    def __init__(self, h, n, g):
        super().__init__()
        self.a = nn.Parameter(0.3 + 0.6 * torch.rand(h, n, generator=g))
        self.b = nn.Parameter(torch.randn(h, n, generator=g) / math.sqrt(n))
        self.c = nn.Parameter(torch.randn(h, n, generator=g) / math.sqrt(n))
        self.d = nn.Parameter(torch.zeros(h))

    def forward(self, u):                       # u: (B, L, H)
        L = u.shape[1]
        k = torch.arange(L, dtype=u.dtype)
        powers = self.a[..., None] ** k         # (H, N, L): a^k, unconstrained a
        kernel = (self.c * self.b)[..., None].mul(powers).sum(1)   # (H, L)
        uf = torch.fft.rfft(u.transpose(1, 2), n=2 * L)
        kf = torch.fft.rfft(kernel, n=2 * L)
        y = torch.fft.irfft(uf * kf, n=2 * L)[..., :L].transpose(1, 2)
        return y + u * self.d


class SSMRegressor(nn.Module):
    def __init__(self, d_in, h, n, g):
        super().__init__()
        self.encoder = nn.Linear(d_in, h)
        self.ssm = DiagonalSSM(h, n, g)
        self.act = nn.GELU()
        self.decoder = nn.Linear(h, 1)

    def forward(self, x):
        return self.decoder(self.act(self.ssm(self.encoder(x)))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(4000 + seed)
    L = [256, 192, 224][seed % 3]
    d_in = 4
    bs = 16
    steps = 200
    tau = [50.0, 40.0, 60.0][seed % 3]
    alpha = math.exp(-1.0 / tau)
    w = torch.randn(d_in, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, L, d_in, generator=g)
        s = x @ w
        ema = torch.zeros(bs, L)
        acc = torch.zeros(bs)
        for t in range(L):
            acc = alpha * acc + (1 - alpha) * s[:, t]
            ema[:, t] = acc
        y = 4.0 * ema + 0.3 * torch.tanh(x[..., 0])
        batches.append((x, y))
    torch.manual_seed(seed)
    gm = torch.Generator().manual_seed(seed)
    model = SSMRegressor(d_in, [16, 24, 16][seed % 3], [8, 8, 12][seed % 3], gm)
    lr = 1e-3 if fixed else [0.2, 0.15, 0.2][seed % 3]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
