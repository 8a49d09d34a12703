"""unsafe_op: a 1-D audio CNN whose log-mel front end computes log(mel) without an epsilon;
the first batch that contains a zero-padded (digitally silent) clip produces log(0) = -inf.

Model and data
    Keyword-spotting style classifier on 0.5 s, 8 kHz clips: six classes of harmonic tones
    (300-3000 Hz) in noise. The front end is a module of the model (``frontend``): STFT
    (n_fft 256, hop 128, Hann, center=True) -> power -> 32-band triangular mel filterbank ->
    ``torch.log(mel)``; then BatchNorm1d over mel bands, three Conv1d+ReLU layers, mean-pool
    and a Linear head. Adam lr 1e-3, batch 16.
    Three of the 2400 clips are shorter than the batch length (0.1-0.25 s) and are
    zero-padded to 0.5 s by the collate function.

Mechanism (measured, seeds 0/1/2)
    1. For full-length clips every mel band has power > 0 (the smallest log-mel value over
       all unpadded clips is -4.4 / -3.8 / -5.3), so the run is calm: the loss falls from
       1.79 to 1.33 / 0.14 / 0.04 by the step before the fault.
    2. A padded clip has STFT frames that lie entirely in the zero padding: their power is
       exactly 0.0 in every band and log(0) = -inf (19-21 silent frames x 32 bands = 608-672
       -inf values in the faulty batch); the waveform itself is finite.
    3. BatchNorm's batch mean of a channel with -inf is -inf, (-inf) - (-inf) = NaN, so the
       logits and the loss are NaN at that step (step 21 / 36 / 79), the backward pass writes
       NaN into every parameter and all later steps are NaN.
    With log(mel + 1e-6) (fixed) the silent frames are -13.8, finite; the same batches
    train to a loss of 0.003-0.05 (r = 0.007-0.26).

ORIGIN
    "frontend": the LogMel module holds the unsafe log; its input (the waveform) is finite
    and the first non-finite value appears in its output.

fixed=True
    Only the log changes: log(mel + 1e-6) (as torchaudio/librosa do with amin/eps); the data,
    including the padded clips, are unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "frontend"
SOURCE = ("log of a zero-power spectrogram: Kyubyong/tacotron#32 and #36 (silent/zero-padded "
          "frames become -inf after log), tensorflow/docs#1943 (add an epsilon before log in the "
          "spectrogram tutorial), kitzeslab/opensoundscape#794; librosa.power_to_db / torchaudio "
          "AmplitudeToDB clamp with amin=1e-10 for this reason")

SR = 8000


def _mel_fb(n_fft, n_mels, sr):
    def hz2mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    def mel2hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    mpts = torch.linspace(hz2mel(60.0), hz2mel(sr / 2), n_mels + 2)
    hz = torch.tensor([mel2hz(float(m)) for m in mpts])
    fb = torch.zeros(n_fft // 2 + 1, n_mels)
    for i in range(n_mels):
        lo, c, hi = hz[i], hz[i + 1], hz[i + 2]
        fb[:, i] = torch.clamp(torch.minimum((freqs - lo) / (c - lo), (hi - freqs) / (hi - c)), min=0.0)
    return fb


class LogMel(nn.Module):
    def __init__(self, n_fft=256, hop=128, n_mels=32, eps=0.0):
        super().__init__()
        self.n_fft, self.hop, self.eps = n_fft, hop, eps
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", _mel_fb(n_fft, n_mels, SR))

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, center=True,
                          return_complex=True)
        power = spec.real ** 2 + spec.imag ** 2                              # (B, F, T)
        mel = torch.matmul(power.transpose(1, 2), self.fb).transpose(1, 2)  # (B, M, T)
        if self.eps:
            return torch.log(mel + self.eps)
        return torch.log(mel)


class AudioCNN(nn.Module):
    def __init__(self, n_mels, width, n_cls, eps):
        super().__init__()
        self.frontend = LogMel(n_mels=n_mels, eps=eps)
        self.norm = nn.BatchNorm1d(n_mels)
        self.body = nn.Sequential(
            nn.Conv1d(n_mels, width, 5, padding=2), nn.ReLU(),
            nn.Conv1d(width, width, 5, padding=2, stride=2), nn.ReLU(),
            nn.Conv1d(width, width, 3, padding=1), nn.ReLU(),
        )
        self.head = nn.Linear(width, n_cls)

    def forward(self, wav):
        x = self.norm(self.frontend(wav))
        return self.head(self.body(x).mean(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(3000 + seed)
    n_cls, bs, steps = 6, 16, 150
    T = SR // 2
    N = bs * steps
    labels = torch.randint(0, n_cls, (N,), generator=g)
    t = torch.arange(T) / SR
    f0 = torch.linspace(300, 3000, n_cls)[labels] * (1 + 0.03 * torch.randn(N, generator=g))
    phase = 2 * math.pi * torch.rand(N, generator=g)
    wav = 0.5 * torch.sin(2 * math.pi * f0[:, None] * t[None] + phase[:, None])
    wav = wav + 0.15 * torch.sin(4 * math.pi * f0[:, None] * t[None])
    wav = wav + 0.3 * torch.randn(N, T, generator=g)
    # a handful of clips (3 of 2400) are short and zero-padded to the batch length by the
    # collate function; with shuffling they land somewhere after the first few batches
    short = torch.zeros(N, dtype=torch.bool)
    short[bs * 8 + torch.randperm(N - bs * 8, generator=g)[:3]] = True
    lens = torch.randint(T // 5, T // 2, (N,), generator=g)
    pad = (torch.arange(T)[None] >= lens[:, None]) & short[:, None]
    wav = wav.masked_fill(pad, 0.0)
    batches = [(wav[i * bs:(i + 1) * bs], labels[i * bs:(i + 1) * bs]) for i in range(steps)]

    torch.manual_seed(seed)
    model = AudioCNN(32, [32, 48, 40][seed % 3], n_cls, eps=1e-6 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
