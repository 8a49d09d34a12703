"""WaveGlow-style normalising flow on short audio frames (16 samples, conditioned on a coarse
loudness/pitch code): a stack of invertible 1x1 mixes (LU-free, orthogonally initialised) and
affine coupling layers whose scale/shift come from a small WN-free conv net. The loss is the exact
negative log-likelihood per sample, 0.5*z^2 + 0.5*log(2*pi) - sum(log|s|)/D - logdet(W)/D. Audio
samples have a standard deviation far below 1, so once the flow has learned the scale the NLL is
negative (a density above 1): the loss crosses zero and keeps decreasing into negative values,
exactly as WaveGlow's published training curves do. That is normal, nothing is broken."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Prenger et al. 2019 WaveGlow (affine coupling + invertible 1x1 conv, negative "
          "log-likelihood loss that goes below zero); NVIDIA/waveglow issues 'why is the loss negative'")

D = 16


class Coupling(nn.Module):
    def __init__(self, cond=4, hid=48):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(D // 2 + cond, hid), nn.Tanh(), nn.Linear(hid, hid), nn.Tanh(), nn.Linear(hid, D))
        nn.init.zeros_(self.net[-1].weight); nn.init.zeros_(self.net[-1].bias)

    def forward(self, x, c):
        xa, xb = x[:, : D // 2], x[:, D // 2:]
        st = self.net(torch.cat([xa, c], 1))
        log_s, t = st[:, : D // 2], st[:, D // 2:]
        yb = xb * torch.exp(log_s) + t
        return torch.cat([xa, yb], 1), log_s.sum(1)


class Inv1x1(nn.Module):
    def __init__(self):
        super().__init__()
        w = torch.linalg.qr(torch.randn(D, D))[0]
        self.W = nn.Parameter(w)

    def forward(self, x):
        return x @ self.W.T, torch.linalg.slogdet(self.W)[1].expand(x.shape[0])


class TinyWaveGlow(nn.Module):
    def __init__(self, n_flows=4):
        super().__init__()
        self.mixes = nn.ModuleList(Inv1x1() for _ in range(n_flows))
        self.couplings = nn.ModuleList(Coupling() for _ in range(n_flows))

    def forward(self, audio, cond):
        z, logdet = audio, torch.zeros(audio.shape[0])
        for mix, cpl in zip(self.mixes, self.couplings):
            z, ld1 = mix(z)
            z, ld2 = cpl(z, cond)
            logdet = logdet + ld1 + ld2
        return z, logdet


def nll(out, _target):
    z, logdet = out
    return (0.5 * (z ** 2).sum(1) + 0.5 * D * math.log(2 * math.pi) - logdet).mean() / D


def _batch(g, n, sr=16000):
    f0 = 100 + 300 * torch.rand(n, 1, generator=g)
    amp = 0.02 + 0.1 * torch.rand(n, 1, generator=g)
    ph = 2 * math.pi * torch.rand(n, 1, generator=g)
    t = torch.arange(D).float().view(1, D) / sr
    audio = amp * torch.sin(2 * math.pi * f0 * t + ph) + 0.3 * amp * torch.sin(4 * math.pi * f0 * t + 2 * ph)
    audio = audio + 0.003 * torch.randn(n, D, generator=g)
    cond = torch.cat([amp * 10, (f0 - 250) / 100, torch.sin(ph), torch.cos(ph)], 1)
    return (audio, cond), torch.zeros(n)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyWaveGlow()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pool = [_batch(g, 64) for _ in range(20)]
    steps = 200
    batches = [pool[i % len(pool)] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
