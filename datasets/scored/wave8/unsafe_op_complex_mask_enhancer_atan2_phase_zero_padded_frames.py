"""Complex-ratio-mask speech enhancer (DCCRN/PHASEN-style) trained with a magnitude + phase-aware
loss. The network predicts a bounded complex mask M that multiplies the noisy STFT X; a small
`to_polar` module turns the enhanced spectrum into (magnitude, phase) with sqrt(re^2+im^2) and
atan2(im, re), and the loss is L1 on magnitude plus a target-magnitude-weighted 1-cos(phase error).
Utterances are bucketed by length, so the first batches carry no padding and training is calm.
When a bucket mixes lengths the short utterances are zero-padded in the STFT domain: there
X = 0 exactly, so the enhanced spectrum is exactly 0+0j and the backward of sqrt at 0 (inf*0) and
of atan2 at the origin (0/0) produce NaN gradients, which reach every weight through the mask;
the next loss is NaN. Fix: epsilon inside the polar conversion (sqrt(re^2+im^2+eps), atan2 with an
eps-shifted real part), nothing else changes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "to_polar"
SOURCE = ("PyTorch forum / GitHub issues 'torch.atan2 / torch.angle backward returns NaN at 0' and "
          "'sqrt backward NaN for zero magnitude' in phase-aware speech enhancement (DCCRN, PHASEN, "
          "complex spectral mapping) with zero-padded STFT frames")


class ToPolar(nn.Module):
    def __init__(self, eps=0.0):
        super().__init__()
        self.eps = eps

    def forward(self, re, im):
        mag = torch.sqrt(re * re + im * im + self.eps)
        phase = torch.atan2(im, re + self.eps)
        return mag, phase


class CRMEnhancer(nn.Module):
    def __init__(self, eps=0.0, ch=24):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, ch, 3, padding=1), nn.PReLU(ch),
            nn.Conv2d(ch, ch, 3, padding=(1, 2), dilation=(1, 2)), nn.PReLU(ch),
            nn.Conv2d(ch, ch, 3, padding=(1, 4), dilation=(1, 4)), nn.PReLU(ch),
        )
        self.mask = nn.Conv2d(ch, 2, 1)
        self.to_polar = ToPolar(eps)

    def forward(self, xr, xi):
        feat = torch.stack([torch.log1p(torch.sqrt(xr ** 2 + xi ** 2)), xr, xi], 1)
        m = torch.tanh(self.mask(self.body(feat))) * 1.5
        mr, mi = m[:, 0], m[:, 1]
        yr = mr * xr - mi * xi
        yi = mr * xi + mi * xr
        mag, phase = self.to_polar(yr, yi)
        return {"mag": mag, "phase": phase}


def _utt(g, F_bins, T):
    f0 = 3 + int(torch.randint(0, 5, (1,), generator=g))
    spec = torch.zeros(F_bins, T)
    env = 0.5 + torch.rand(T, generator=g)
    for k in range(1, F_bins // f0):
        spec[k * f0] = env * (1.0 / k) * 2.0
    ph = torch.rand(F_bins, T, generator=g) * 2 * math.pi
    sr, si = spec * torch.cos(ph), spec * torch.sin(ph)
    nr = 0.15 * torch.randn(F_bins, T, generator=g)
    ni = 0.15 * torch.randn(F_bins, T, generator=g)
    return sr + nr, si + ni, sr, si


def _batch(g, lengths, F_bins=33, T=32):
    xs = [torch.zeros(len(lengths), F_bins, T) for _ in range(4)]
    for b, L in enumerate(lengths):
        parts = _utt(g, F_bins, L)
        for i in range(4):
            xs[i][b, :, :L] = parts[i]              # zero padding in the STFT domain
    xr, xi, sr, si = xs
    s_mag = torch.sqrt(sr ** 2 + si ** 2)
    s_phase = torch.atan2(si, sr)
    return (xr, xi), {"mag": s_mag, "phase": s_phase}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CRMEnhancer(eps=1e-8 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps = 80
    batches = []
    for s in range(steps):
        if s < 30 or s % 7 != 2:
            lengths = [32] * 6                        # a full-length bucket
        else:
            lengths = [32] * 4 + [int(torch.randint(18, 28, (1,), generator=g)) for _ in range(2)]
        batches.append(_batch(g, lengths))

    def loss_fn(out, tgt):
        mag_loss = (out["mag"] - tgt["mag"]).abs().mean()
        w = tgt["mag"] / (tgt["mag"].mean() + 1e-8)
        phase_loss = (w * (1 - torch.cos(out["phase"] - tgt["phase"]))).mean()
        return mag_loss + 0.5 * phase_loss

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
