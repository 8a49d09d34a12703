"""Dilated-convolution beat tracker (Davies & Boeck 2019 TCN-style) fed filterbank
magnitude spectrograms computed from int16 PCM samples that were never divided by 32768.

Mechanism. `scipy.io.wavfile.read` (and many hand-written WAV loaders) return int16 sample
values. The feature code takes the STFT of those raw integers and pools it into a filterbank
magnitude spectrogram without log-compression or standardisation, so the input frames have
values of order 1e3-1e5 instead of order 1. The first Conv1d (`frontend`) turns them into
pre-activations of order 1e4 and the network's beat logits are in the thousands: the BCE loss
is huge from step 0. Under SGD with momentum (the optimiser of the original BLSTM/TCN beat
trackers) the frontend's weight gradient is proportional to the input scale, so the first
update is ~1e4x too large; the next forward pass is orders of magnitude larger and the activations
and the loss overflow to inf/NaN on the second or third step.

ORIGIN = "frontend": the first layer, the one whose inputs are the unscaled features (its
outputs are the first values out of range and its gradient is the one scaled by them).

Fix: the same features standardised per frequency band (dataset mean/std, computed on the
same int16-derived spectrograms), which is what the fixed run is fed. Same data otherwise,
same model, same optimiser.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "frontend"
SOURCE = ("scipy.io.wavfile.read returns int16 PCM (values up to 32767); spectrogram features built "
          "from it without /32768, log or standardisation feed a TCN beat tracker (Davies & Boeck 2019, "
          "Boeck & Schedl 2011 SGD training) inputs of order 1e4: huge loss at step 0, then divergence.")


class DilatedBlock(nn.Module):
    def __init__(self, ch, dilation, k=5):
        super().__init__()
        self.conv = nn.Conv1d(ch, ch, k, dilation=dilation, padding=dilation * (k - 1) // 2)
        self.act = nn.ELU()
        self.mix = nn.Conv1d(ch, ch, 1)

    def forward(self, x):
        return x + self.mix(self.act(self.conv(x)))


class BeatTCN(nn.Module):
    def __init__(self, n_bands, ch, n_blocks):
        super().__init__()
        self.frontend = nn.Conv1d(n_bands, ch, 3, padding=1)
        self.front_act = nn.ELU()
        self.blocks = nn.Sequential(*[DilatedBlock(ch, 2 ** i) for i in range(n_blocks)])
        self.out = nn.Conv1d(ch, 1, 1)

    def forward(self, spec):                         # (B, bands, T)
        h = self.front_act(self.frontend(spec))
        return self.out(self.blocks(h)).squeeze(1)   # beat logits (B, T)


def _clip(g, n_frames, fps, n_bands):
    """Synthetic int16-scale filterbank magnitudes: kick/snare/hat onsets on a tempo grid."""
    tempo = 80 + 80 * torch.rand(1, generator=g).item()
    period = 60.0 * fps / tempo
    phase = period * torch.rand(1, generator=g).item()
    beats = torch.arange(phase, n_frames, period)
    t = torch.arange(n_frames, dtype=torch.float32)
    bands = torch.arange(n_bands, dtype=torch.float32)
    kick = torch.exp(-bands / 4)                     # low bands
    snare = torch.exp(-((bands - n_bands * 0.5) / 5) ** 2)
    hat = torch.exp(-((bands - n_bands * 0.85) / 3) ** 2)
    spec = torch.zeros(n_bands, n_frames)
    for i, b in enumerate(beats.tolist()):
        env = torch.exp(-torch.clamp(t - round(b), min=0) / 3) * (t >= round(b))
        spec += (kick if i % 2 == 0 else snare)[:, None] * env[None, :] * (0.7 + 0.6 * torch.rand(1, generator=g))
        off = b + period / 2
        if off < n_frames:                           # off-beat hi-hats
            env = torch.exp(-torch.clamp(t - round(off), min=0) / 1.5) * (t >= round(off))
            spec += hat[:, None] * env[None, :] * 0.5 * torch.rand(1, generator=g)
    spec += 0.05 * torch.rand(n_bands, n_frames, generator=g)
    gain = 32768 * (0.1 + 0.4 * torch.rand(1, generator=g))       # int16 full-scale PCM, summed over bins
    spec = spec * gain * 8
    target = torch.zeros(n_frames)
    for b in beats.tolist():
        i = int(round(b))
        if i < n_frames:
            target[i] = 1.0
            for j in (i - 1, i + 1):                 # widened targets, as in Boeck et al.
                if 0 <= j < n_frames:
                    target[j] = max(target[j].item(), 0.5)
    return spec, target


class WeightedBCE(nn.Module):
    def __init__(self, pos_weight):
        super().__init__()
        self.pos_weight = torch.tensor(pos_weight)

    def forward(self, logits, target):
        return F.binary_cross_entropy_with_logits(logits, target, pos_weight=self.pos_weight)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31337 + seed)
    fps = 50
    n_bands = [40, 48, 32][seed % 3]
    ch = [24, 32, 16, 20][seed % 4]
    n_blocks = 4 + seed % 3
    n_frames = [200, 256, 160][(seed // 2) % 3]
    bs = [4, 6, 8][seed % 3]
    steps = 120 + 20 * (seed % 4)
    lr = [0.01, 0.005, 0.02][seed % 3]
    data = []
    for _ in range(steps):
        xs, ys = zip(*[_clip(g, n_frames, fps, n_bands) for _ in range(bs)])
        data.append((torch.stack(xs), torch.stack(ys)))
    if fixed:                                        # standardise each band with dataset statistics
        allx = torch.cat([x for x, _ in data], 0)
        mean = allx.mean(dim=(0, 2), keepdim=True)[0]
        std = allx.std(dim=(0, 2), keepdim=True)[0]
        data = [((x - mean) / std, y) for x, y in data]
    model = BeatTCN(n_bands, ch, n_blocks)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=WeightedBCE(4.0), batches=data, steps=steps,
                amp_dtype=None, scaler=None)
