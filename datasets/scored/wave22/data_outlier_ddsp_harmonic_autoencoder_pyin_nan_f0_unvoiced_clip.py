"""DDSP-style harmonic synthesiser decoder (per-frame MLP on f0 + loudness ->
harmonic amplitudes -> additive oscillator bank -> multi-scale spectral loss), with
f0 extracted offline by ``librosa.pyin`` instead of CREPE.

Mechanism: pyin returns f0 = NaN for frames it judges unvoiced. Almost all training
clips are fully voiced sustained notes, but one clip (a breath / note release at the
end of a phrase) has a run of unvoiced frames, so one batch carries NaN f0 values.
NaN enters the decoder input and the oscillator phase cumsum, the synthesised audio
and the spectral loss of that batch are NaN, and Adam writes NaN into every weight.
Before that batch the run is calm and the loss falls steadily.

ORIGIN: ``mlp.0`` - the first decoder layer, the first module whose output turns
non-finite when the corrupt f0 arrives (the cause is the batch, not the layer).

Fix: sanitise the f0 track in the loader - unvoiced (NaN) frames are set to 0 Hz
with zero target amplitude, as the DDSP preprocessing does for silence; nothing else
changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "mlp.0"
SOURCE = ("librosa.pyin documentation (f0 is NaN for unvoiced frames) and DDSP "
          "re-implementation issues 'loss becomes NaN after some steps' traced to "
          "NaN f0 from pyin; fix: np.nan_to_num / voiced-flag masking")

SR = 8000
HOP = 64
N_HARM = 12


def synth(f0_frames, amps_frames):
    # f0_frames: (B, T) Hz; amps_frames: (B, T, H)
    f0 = F.interpolate(f0_frames.unsqueeze(1), scale_factor=HOP, mode="linear",
                       align_corners=False).squeeze(1)                  # (B, N)
    amps = F.interpolate(amps_frames.transpose(1, 2), scale_factor=HOP, mode="linear",
                         align_corners=False)                            # (B, H, N)
    k = torch.arange(1, N_HARM + 1, dtype=f0.dtype).view(1, -1, 1)
    phase = 2 * math.pi * torch.cumsum(f0 / SR, dim=-1).unsqueeze(1) * k
    alias = (f0.unsqueeze(1) * k < SR / 2).to(f0.dtype)
    return (amps * alias * torch.sin(phase)).sum(1)                     # (B, N)


def spec_loss(pred, target):
    loss = 0.0
    for n_fft in (256, 128, 64):
        win = torch.hann_window(n_fft)
        P = torch.stft(pred, n_fft, n_fft // 4, window=win, return_complex=True).abs()
        T = torch.stft(target, n_fft, n_fft // 4, window=win, return_complex=True).abs()
        loss = loss + (P - T).abs().mean() + (torch.log(P + 1e-5) - torch.log(T + 1e-5)).abs().mean()
    return loss


class HarmonicDecoder(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = []
        cin = 2
        for _ in range(depth):
            layers += [nn.Linear(cin, width), nn.LayerNorm(width), nn.LeakyReLU(0.1)]
            cin = width
        layers.append(nn.Linear(cin, N_HARM + 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, f0, loud_db):
        x = torch.stack([f0 / 500.0 - 1.0, loud_db / 40.0 + 1.0], dim=-1)   # (B, T, 2)
        h = self.mlp(x)
        total = 2.0 * torch.sigmoid(h[..., :1]) ** math.log(10.0) + 1e-7
        dist = torch.softmax(h[..., 1:], dim=-1)
        return synth(f0, total * dist)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    width = [64, 48, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [4, 6, 4][seed % 3]
    bad_step = [61, 98, 134][seed % 3]
    steps = 160
    T = 32
    model = HarmonicDecoder(width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=[3e-3, 2e-3, 3e-3][seed % 3])
    # the "instrument": a timbre fixed by f0 (brighter when higher) and loudness
    timbre_slope = torch.rand(1, generator=g).item() * 0.3 + 0.4
    batches = []
    for t in range(steps):
        base = 150 + 450 * torch.rand(bs, 1, generator=g)
        vib = 1 + 0.01 * torch.sin(torch.linspace(0, 6.28, T) * (torch.rand(bs, 1, generator=g) * 3 + 1))
        f0 = base * vib
        loud = -30 + 20 * torch.rand(bs, 1, generator=g) + torch.linspace(0, -6, T)
        k = torch.arange(1, N_HARM + 1).float()
        decay = torch.exp(-k.view(1, 1, -1) * timbre_slope * (300.0 / f0.unsqueeze(-1)) ** 0.5)
        amp = (10 ** (loud / 20.0)).unsqueeze(-1) * decay / decay.sum(-1, keepdim=True)
        if t == bad_step:
            # one clip ends with a breath: pyin marks the last frames unvoiced -> NaN
            j = int(torch.randint(0, bs, (1,), generator=g))
            n_unv = 6 + int(torch.randint(0, 6, (1,), generator=g))
            f0[j, T - n_unv:] = float("nan")
            amp[j, T - n_unv:] = 0.0
        with torch.no_grad():
            target = synth(torch.nan_to_num(f0, nan=0.0), amp)
        if fixed:
            f0 = torch.nan_to_num(f0, nan=0.0)
        batches.append(((f0, loud), target))

    return {"model": model, "optimizer": opt, "loss_fn": spec_loss, "batches": batches,
            "steps": steps}
