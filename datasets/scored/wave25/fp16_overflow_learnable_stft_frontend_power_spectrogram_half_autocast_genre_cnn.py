"""Music genre / audio event CNN on raw waveform with an STFT front end implemented as a
Conv1d with windowed-Fourier kernels (real and imaginary parts, n_fft 1536-2048, learnable,
nnAudio-style), power = re^2 + im^2, log compression, then a small 2D CNN; trained
under ``torch.autocast(float16)`` without a GradScaler; cross-entropy, Adam.

Mechanism: under autocast the STFT conv runs in fp16 and its output stays fp16, so the
squaring for the power spectrogram is done in half precision.  For a loud, tonal
clip (mastered pop/EDM at near full scale) a bin's magnitude is ~amplitude x n_fft / 4,
i.e. 300-450, and its square passes 65504 -> inf; log(inf) = inf and the next conv turns
it into NaN (inf - inf), so the loss is non-finite on the first batch that holds a
loud tonal clip (quiet batches come first and train normally).

ORIGIN: ``frontend`` -- the STFT front end, whose squared output is the first value to
pass the fp16 range.

Fix: run the front end (STFT conv, power, log) in fp32 (autocast disabled for that
module, input cast to float) -- the usual "spectrogram in fp32" rule; the rest of the
model still runs in fp16 autocast.  Same data, model, optimiser and steps.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "frontend"
SOURCE = ("nnAudio / torchaudio issues on fp16 spectrograms overflowing (|STFT|^2 > 65504 for "
          "loud signals under AMP) and the common advice to compute spectrograms in fp32 "
          "before autocast regions.")

N_CLASSES = 6


class STFTFrontend(nn.Module):
    def __init__(self, n_fft, n_bins, hop, fp32):
        super().__init__()
        t = torch.arange(n_fft).float()
        win = torch.hann_window(n_fft)
        k = 4.0 + 4.0 * torch.arange(n_bins).float()[:, None]  # low-frequency bins
        re = (win * torch.cos(2 * math.pi * k * t / n_fft))[:, None, :]
        im = (-win * torch.sin(2 * math.pi * k * t / n_fft))[:, None, :]
        self.conv = nn.Conv1d(1, 2 * n_bins, n_fft, stride=hop, bias=False)
        with torch.no_grad():
            self.conv.weight.copy_(torch.cat([re, im]))
        self.n_bins = n_bins
        self.fp32 = fp32

    def _spec(self, wav):
        s = self.conv(wav.unsqueeze(1))
        re, im = s[:, :self.n_bins], s[:, self.n_bins:]
        power = re * re + im * im
        return torch.log(power + 1e-6)

    def forward(self, wav):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._spec(wav.float())
        return self._spec(wav)


class WaveGenreCNN(nn.Module):
    def __init__(self, n_fft, n_bins, hop, ch, fp32):
        super().__init__()
        self.frontend = STFTFrontend(n_fft, n_bins, hop, fp32)
        self.norm = nn.BatchNorm2d(1)
        self.conv1 = nn.Conv2d(1, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.head = nn.Linear(ch, N_CLASSES)

    def forward(self, wav):
        x = self.norm(self.frontend(wav).unsqueeze(1))
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        return self.head(x.mean((2, 3)))


def _clips(g, n, L, sr, n_fft, loud):
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    t = torch.arange(L).float() / sr
    f0 = ((8 + 12 * y).float() * sr / n_fft)[:, None]  # bass line / kick fundamentals
    amp = (0.9 if loud else 0.05) * (0.8 + 0.2 * torch.rand(n, 1, generator=g))
    wav = amp * (torch.sin(2 * math.pi * f0 * t) + 0.5 * torch.sin(2 * math.pi * 3 * f0 * t))
    wav = wav + 0.01 * torch.randn(n, L, generator=g)
    return wav.clamp(-1, 1), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7 + seed)
    n_fft = [2048, 1536, 2048][seed % 3]
    n_bins = [24, 20, 28][seed % 3]
    hop = n_fft // 2
    ch = [16, 24, 12][seed % 3]
    lr = [3e-3, 2e-3, 2.5e-3][seed % 3]
    bs = [8, 12, 10][seed % 3]
    first_loud = [25, 12, 40][seed % 3]
    steps = 120
    sr, L = 8000, 16000
    model = WaveGenreCNN(n_fft, n_bins, hop, ch, fp32=fixed)
    batches = [_clips(g, bs, L, sr, n_fft, loud=(s >= first_loud and s % 3 == 0)) for s in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
