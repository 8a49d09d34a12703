"""bad_init: S4D (diagonal state-space) sequence classifier whose state matrix is initialised
with the wrong sign (unstable poles).

Mechanism: S4D-Real (Gu et al. 2022) parameterises the diagonal state matrix as
A = -exp(log_A_real) with log_A_real = log(n + 1), so every mode decays, and computes the
convolution kernel K[l] = sum_n C_n (exp(dt A_n) - 1) / A_n * exp(dt A_n l) (ZOH) for
l = 0..L-1, applied with an FFT convolution.  The user's init writes
A = torch.exp(self.log_A_real) (minus sign dropped), so A_n = +(n+1): each mode *grows*
as exp(dt (n+1) l) along the sequence.  With dt up to 0.1, N = 16-32 modes and L = 96-160
steps the kernel reaches exp(100+) -> inf in the very first forward pass of the first
layer, the FFT convolution turns it into inf/NaN, and the loss is NaN from step 0.

ORIGIN: "layers.0.kernel" (the first S4D kernel module; its output is the first
non-finite activation).
Fix: A = -torch.exp(self.log_A_real) (the S4D-Real initialisation) - the only change.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "layers.0.kernel"
SOURCE = ("Gu, Gupta, Goel, Re 2022 'On the Parameterization and Initialization of Diagonal "
          "State Space Models' (S4D-Real A_n = -(n+1), A = -exp(log_A_real)); known pattern: "
          "sign dropped in a re-implementation, giving unstable modes")


class S4DKernel(nn.Module):
    def __init__(self, H, N, dt_min, dt_max, stable, seed_gen):
        super().__init__()
        log_dt = torch.rand(H, generator=seed_gen) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        self.log_dt = nn.Parameter(log_dt)
        self.log_A_real = nn.Parameter(torch.log(torch.arange(1, N + 1).float()).repeat(H, 1))
        self.C = nn.Parameter(torch.randn(H, N, generator=seed_gen) * (0.5 ** 0.5))
        self.stable = stable

    def forward(self, L):
        dt = torch.exp(self.log_dt)[:, None]                               # (H, 1)
        A = -torch.exp(self.log_A_real) if self.stable else torch.exp(self.log_A_real)
        dtA = dt * A                                                        # (H, N)
        coef = self.C * (torch.exp(dtA) - 1.0) / A                          # ZOH, B = 1
        l = torch.arange(L, dtype=torch.float32)
        return torch.einsum("hn,hnl->hl", coef, torch.exp(dtA[..., None] * l))   # (H, L)


class S4DBlock(nn.Module):
    def __init__(self, H, N, dt_min, dt_max, stable, g):
        super().__init__()
        self.kernel = S4DKernel(H, N, dt_min, dt_max, stable, g)
        self.D = nn.Parameter(torch.randn(H, generator=g))
        self.out = nn.Linear(H, 2 * H)
        self.norm = nn.LayerNorm(H)

    def forward(self, x):                       # x: (B, L, H)
        B, L, H = x.shape
        u = self.norm(x).transpose(1, 2)        # (B, H, L), pre-norm
        k = self.kernel(L)
        y = torch.fft.irfft(torch.fft.rfft(u, n=2 * L) * torch.fft.rfft(k, n=2 * L), n=2 * L)[..., :L]
        y = F.gelu(y + u * self.D[:, None]).transpose(1, 2)
        return x + F.glu(self.out(y), dim=-1)


class S4DClassifier(nn.Module):
    def __init__(self, vocab, H, N, layers, n_cls, stable, g):
        super().__init__()
        self.embedding = nn.Embedding(vocab, H)
        self.layers = nn.ModuleList([S4DBlock(H, N, 1e-3, 1e-1, stable, g) for _ in range(layers)])
        self.norm = nn.LayerNorm(H)
        self.classifier = nn.Linear(H, n_cls)

    def forward(self, tokens):
        x = self.embedding(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.classifier(self.norm(x).mean(1))


def _data(g, n, L, vocab, n_cls):
    # label = which class "marker" token is sprinkled through otherwise random byte noise
    x = torch.randint(n_cls, vocab, (n, L), generator=g)
    y = torch.randint(0, n_cls, (n,), generator=g)
    pos = torch.randint(0, L, (n, L // 10), generator=g)
    x[torch.arange(n)[:, None], pos] = y[:, None]
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(vocab=32, H=48, N=16, layers=2, L=128, cls=4, bs=16, steps=80, lr=3e-3),
           dict(vocab=40, H=32, N=32, layers=3, L=96, cls=5, bs=24, steps=90, lr=2e-3),
           dict(vocab=24, H=64, N=16, layers=2, L=160, cls=3, bs=16, steps=70, lr=3e-3)][seed % 3]
    init_gen = torch.Generator().manual_seed(seed + 100)
    model = S4DClassifier(cfg["vocab"], cfg["H"], cfg["N"], cfg["layers"], cfg["cls"], fixed, init_gen)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    bs = cfg["bs"]
    x, y = _data(g, cfg["steps"] * bs, cfg["L"], cfg["vocab"], cfg["cls"])
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=cfg["steps"])
