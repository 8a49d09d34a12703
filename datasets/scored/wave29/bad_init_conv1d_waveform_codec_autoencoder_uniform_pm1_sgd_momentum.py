"""Strided Conv1d waveform autoencoder (neural-codec style) with weights drawn from U(-1, 1).

Mechanism: a small SoundStream/EnCodec-like autoencoder (strided Conv1d encoder, ConvTranspose1d
decoder, LeakyReLU(0.2), no normalisation layers) is initialised by a helper that calls
``nn.init.uniform_(w, -1, 1)`` on every conv -- the author meant the PyTorch default
U(-1/sqrt(fan_in), 1/sqrt(fan_in)) and dropped the fan-in.  With fan-ins of 4..192 every layer
multiplies the activation scale by roughly sqrt(fan_in/3), so after 8-12 layers the
reconstruction is 1e3-1e5 times the signal and the L1 loss is already enormous at step 0.  The
first SGD+momentum updates are proportional to those activations, the weights jump to ~1e10+,
the next forward pass overflows float32 and the loss becomes inf/NaN within a few steps.

ORIGIN: ``enc.0`` -- the first encoder convolution is where the geometric growth starts; every
later layer only compounds the same per-layer gain.

Fix: leave the convolutions at a fan-in-scaled init (Kaiming uniform for the leaky ReLU slope).
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "enc.0"
SOURCE = ("'nn.init.uniform_(w, -1, 1)' instead of the fan-in bound, a recurring mistake in "
          "forum threads on exploding autoencoder losses; SoundStream / EnCodec conv codec layout")


class CodecAE(nn.Module):
    def __init__(self, n_down, ch):
        super().__init__()
        enc, dec = [], []
        c = 1
        for i in range(n_down):
            enc += [nn.Conv1d(c, ch, 4, stride=2, padding=1), nn.LeakyReLU(0.2)]
            c = ch
        enc += [nn.Conv1d(ch, 16, 3, padding=1)]           # latent
        self.enc = nn.Sequential(*enc)
        c = 16
        for i in range(n_down):
            last = i == n_down - 1
            dec += [nn.ConvTranspose1d(c, 1 if last else ch, 4, stride=2, padding=1)]
            if not last:
                dec += [nn.LeakyReLU(0.2)]
            c = ch
        self.dec = nn.Sequential(*dec)

    def forward(self, x):
        return self.dec(self.enc(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(2000 + seed)
    n_down = [3, 4, 5][seed % 3]
    ch = [32, 48, 40][seed % 3]
    bs = [16, 12, 20][seed % 3]
    lr = [0.01, 0.006, 0.02][seed % 3]
    L, sr, steps = 512, 8000.0, 160

    t = torch.arange(L).float() / sr
    batches = []
    for _ in range(steps):
        f0 = 100 + 300 * torch.rand(bs, 1, generator=g)
        amps = torch.rand(bs, 4, generator=g) / torch.arange(1, 5).float()
        wav = sum(amps[:, k:k + 1] * torch.sin(2 * math.pi * (k + 1) * f0 * t) for k in range(4))
        env = torch.exp(-t * (5 + 20 * torch.rand(bs, 1, generator=g)))
        wav = 0.5 * wav * env + 0.01 * torch.randn(bs, L, generator=g)
        x = wav.unsqueeze(1)
        batches.append((x, x.clone()))

    torch.manual_seed(seed)
    model = CodecAE(n_down, ch)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d)):
            if fixed:
                nn.init.kaiming_uniform_(m.weight, a=0.2, nonlinearity="leaky_relu")
            else:
                nn.init.uniform_(m.weight, -1.0, 1.0)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
