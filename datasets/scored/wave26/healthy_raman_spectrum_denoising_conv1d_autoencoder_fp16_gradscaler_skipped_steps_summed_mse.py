"""Healthy: 1-D convolutional denoising autoencoder for Raman spectra trained under float16
autocast with a working GradScaler, on a loss summed over the 256 spectral bins.

What a naive monitor may flag: (1) the GradScaler starts at scale 2^16; the summed loss starts
at ~20, so with the scaled loss at ~1e6 the fp16 gradients overflow to inf on the first 5-7
steps, the scaler skips those optimizer steps (parameters do not change at all: exactly-zero
updates) and halves its scale until the gradients fit, with an occasional later skip when it
tries to grow the scale again; (2) the loss is a per-spectrum sum over 256 bins, so its
values are large (tens) although each bin's error is small; (3) fp16 activations.
None of this is a failure: after the first few skipped steps the scaler settles, the updates
are ordinary and the loss falls steadily.

ORIGIN: None (healthy run).

Set-up: noisy spectra (Lorentzian peaks on a fluorescence background, shot noise) -> clean
spectra; Conv1d encoder (stride 2) / ConvTranspose1d decoder with SiLU, Adam, fp16 autocast
with torch.amp.GradScaler.  Seeds change the channel width, the depth, the learning rate and
the batch size.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP recipe (torch.autocast + GradScaler: inf/NaN gradients make scaler.step "
          "skip the update and scaler.update lower the scale); Raman denoising CNNs (e.g. "
          "Horgan et al., Anal. Chem. 2021 'High-throughput molecular imaging via deep "
          "learning-enabled Raman spectroscopy').")

NB = 256


def _spectra(n, g):
    x = torch.linspace(0, 1, NB)
    clean = torch.zeros(n, NB)
    npk = torch.randint(3, 8, (n,), generator=g)
    for j in range(n):
        for _ in range(int(npk[j])):
            c = torch.rand(1, generator=g)
            w = 0.004 + 0.012 * torch.rand(1, generator=g)
            a = 0.3 + torch.rand(1, generator=g)
            clean[j] += a / (1 + ((x - c) / w) ** 2)
    decay = 0.3 + torch.rand(n, 1, generator=g)
    bg = (0.3 + 0.5 * torch.rand(n, 1, generator=g)) * torch.exp(-x / decay)
    noisy = clean + bg + 0.08 * torch.randn(n, NB, generator=g) * (clean + bg + 0.2).sqrt()
    return noisy.unsqueeze(1), clean.unsqueeze(1)


class DenoisingAE(nn.Module):
    def __init__(self, ch, depth):
        super().__init__()
        enc, dec, c = [], [], 1
        for i in range(depth):
            enc += [nn.Conv1d(c, ch * 2 ** i, 5, stride=2, padding=2), nn.SiLU()]
            c = ch * 2 ** i
        for i in reversed(range(depth)):
            co = ch * 2 ** (i - 1) if i > 0 else ch
            dec += [nn.ConvTranspose1d(c, co, 4, stride=2, padding=1), nn.SiLU()]
            c = co
        self.encoder = nn.Sequential(*enc)
        self.decoder = nn.Sequential(*dec, nn.Conv1d(c, 1, 3, padding=1))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def _summed_mse(out, target):
    return ((out.float() - target) ** 2).sum((1, 2)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    ch = [16, 12, 24][seed % 3]
    depth = [3, 3, 2][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [16, 24, 12][seed % 3]
    steps = 120
    g = torch.Generator().manual_seed(19000 + seed)
    batches = [_spectra(bs, g) for _ in range(steps)]
    torch.manual_seed(seed)
    model = DenoisingAE(ch, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    return dict(model=model, optimizer=opt, loss_fn=_summed_mse, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
