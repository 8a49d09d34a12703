"""Tiny Conv-TasNet-style speech enhancer (learned Conv1d analysis basis, 1x1-conv mask network
with a sigmoid mask, transposed-conv synthesis) trained with negative scale-invariant SDR, the
standard separation loss, implemented by hand without epsilons: alpha = <s_hat, s> / ||s||^2,
si_sdr = 10 log10(||alpha s||^2 / ||s_hat - alpha s||^2). Training chunks are random 0.5 s crops
of (clean, clean + noise) pairs; the loss (minus SI-SDR in dB) starts around +20 and falls
steadily below -6 by step 50. At step 60 the crop sampler lands two chunks in the leading
digital silence of their clean files, so the reference is exactly zero while the mixture still
holds noise: ||s||^2 = 0, alpha = 0/0 = NaN, the loss is NaN and the NaN gradient poisons every
weight through Adam. The data are legitimate (silence is part of real utterances); the unsafe op
is the division/log without an epsilon. The fixed run adds eps=1e-8 to the denominators and
inside the log, as in the asteroid / torchmetrics implementations; the silent chunks then just
give a one-step finite loss spike and training carries on."""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Le Roux et al. 2019 'SDR - half-baked or well done?' (SI-SDR); Luo & Mesgarani "
          "Conv-TasNet; asteroid/torchmetrics SI-SDR use eps; GitHub issues on NaN SI-SDR loss "
          "for silent / all-zero reference segments")

SR, L = 8000, 4000


class TinyTasNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv1d(1, 48, 16, stride=8, bias=False)
        self.masker = nn.Sequential(nn.Conv1d(48, 64, 1), nn.PReLU(),
                                    nn.Conv1d(64, 64, 3, padding=2, dilation=2), nn.PReLU(),
                                    nn.Conv1d(64, 48, 1), nn.Sigmoid())
        self.decoder = nn.ConvTranspose1d(48, 1, 16, stride=8, bias=False)

    def forward(self, mix):                       # mix: [B, L]
        w = torch.relu(self.encoder(mix.unsqueeze(1)))
        est = self.decoder(w * self.masker(w)).squeeze(1)
        return est[:, : mix.shape[1]]


def neg_si_sdr(est, ref, eps):
    est = est - est.mean(1, keepdim=True)
    ref = ref - ref.mean(1, keepdim=True)
    alpha = (est * ref).sum(1, keepdim=True) / ((ref * ref).sum(1, keepdim=True) + eps)
    target = alpha * ref
    noise = est - target
    ratio = ((target * target).sum(1) + eps) / ((noise * noise).sum(1) + eps)
    return -(10 * torch.log10(ratio)).mean()


def clean_chunk(g):
    t = torch.arange(L, dtype=torch.float32) / SR
    f0 = 110 + 120 * float(torch.rand((), generator=g))
    x = torch.zeros(L)
    for k in range(1, 12):
        formant = math.exp(-((k * f0 - 500) / 400) ** 2) + 0.6 * math.exp(-((k * f0 - 1500) / 500) ** 2)
        x = x + (formant + 0.05) * torch.sin(2 * math.pi * k * f0 * t * (1 + 0.02 * t) + 6.28 * float(torch.rand((), generator=g)))
    syll = 4 + 2 * float(torch.rand((), generator=g))
    env = torch.relu(torch.sin(2 * math.pi * syll * t + 6.28 * float(torch.rand((), generator=g)))) ** 0.5
    return 0.3 * x * env


def make_batch(g, n, silent_rows=()):
    clean, mix = [], []
    for i in range(n):
        s = torch.zeros(L) if i in silent_rows else clean_chunk(g)
        noise = torch.randn(L, generator=g)
        noise = torch.nn.functional.conv1d(noise.view(1, 1, -1), torch.ones(1, 1, 4) / 4, padding=2).view(-1)[:L]
        noise = 0.15 * noise
        clean.append(s); mix.append(s + noise)
    return torch.stack(mix), torch.stack(clean)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyTasNet()
    steps, bad_step = 120, 60
    batches = [make_batch(g, 8, silent_rows=(2, 5) if i == bad_step else ()) for i in range(steps)]
    eps = 1e-8 if fixed else 0.0
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    def loss_fn(est, ref):
        return neg_si_sdr(est, ref, eps)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
