"""Whisper-style conv-stem audio classifier with an in-model Kaldi-compatible fbank front-end, fp16 autocast.

Following the WeNet/FunASR convention the waveform is scaled to int16 range (x * 32768) before
Kaldi fbank (power spectrum -> mel banks -> log -> utterance CMVN). That is harmless in fp32: the log
turns the scale into a constant that CMVN removes. Under float16 autocast, torch.stft stays fp32
but the `power @ mel_banks.T` matmul is cast to fp16; power values of ~1e9 become inf, log(inf)=inf
and CMVN gives inf - inf = NaN at step 0. fixed=True runs the front-end in fp32 (autocast disabled
for that module only), which is what torchaudio/Whisper/HF recommend for feature extraction.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "frontend"
SOURCE = ("WeNet/FunASR compute_fbank (waveform * (1 << 15) then torchaudio.compliance.kaldi.fbank) moved "
          "inside the model under AMP; reports of fbank/MelSpectrogram front-ends giving inf/NaN in fp16 "
          "autocast, fixed by computing features in fp32 (cf. Whisper's fp32 LayerNorm/feature extraction)")

SR = 16000
N_FFT = 512
WIN = 400
HOP = 160
N_MELS = 40
N_CLASSES = 6


def _mel(f):
    return 1127.0 * math.log(1.0 + f / 700.0)


def _kaldi_mel_banks(n_mels, n_fft, sr, low=20.0):
    n_freq = n_fft // 2
    fft_mel = 1127.0 * torch.log(1.0 + torch.arange(n_freq, dtype=torch.float64) * (sr / n_fft) / 700.0)
    lo, hi = _mel(low), _mel(sr / 2)
    delta = (hi - lo) / (n_mels + 1)
    banks = torch.zeros(n_mels, n_freq + 1, dtype=torch.float64)
    for m in range(n_mels):
        left, center, right = lo + m * delta, lo + (m + 1) * delta, lo + (m + 2) * delta
        up = (fft_mel - left) / (center - left)
        down = (right - fft_mel) / (right - center)
        banks[m, :n_freq] = torch.clamp(torch.minimum(up, down), min=0.0)
    return banks.float()  # (n_mels, n_fft//2 + 1), last column zero as in torchaudio


class KaldiFbank(nn.Module):
    def __init__(self, fp32=False):
        super().__init__()
        self.fp32 = fp32
        self.register_buffer("window", torch.hann_window(WIN, periodic=False))
        self.register_buffer("mel_banks", _kaldi_mel_banks(N_MELS, N_FFT, SR))

    def _compute(self, wav):
        wav = wav * (1 << 15)                                   # Kaldi expects int16-scale samples
        wav = wav - wav.mean(dim=-1, keepdim=True)              # remove DC offset
        spec = torch.stft(wav, N_FFT, HOP, win_length=WIN, window=self.window,
                          center=False, return_complex=True)
        power = spec.abs().pow(2).transpose(1, 2)               # (B, T, F) fp32
        mel = power @ self.mel_banks.t()                        # autocast -> fp16 matmul
        logmel = torch.log(torch.clamp(mel, min=torch.finfo(torch.float32).eps))
        feats = logmel - logmel.mean(dim=1, keepdim=True)       # utterance CMVN
        feats = feats / (feats.std(dim=1, keepdim=True) + 1e-5)
        return feats.transpose(1, 2)                            # (B, n_mels, T)

    def forward(self, wav):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._compute(wav.float())
        return self._compute(wav)


def _sinusoids(length, channels, max_timescale=10000):
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q = self.query(x).view(b, t, self.h, -1).transpose(1, 2)
        k = self.key(x).view(b, t, self.h, -1).transpose(1, 2)
        v = self.value(x).view(b, t, self.h, -1).transpose(1, 2)
        scale = (d // self.h) ** -0.25
        w = (q * scale) @ (k * scale).transpose(-1, -2)
        w = w.float().softmax(dim=-1).to(q.dtype)
        return self.out((w @ v).transpose(1, 2).reshape(b, t, d))


class ResidualAttentionBlock(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.attn = MultiHeadAttention(d, h)
        self.attn_ln = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.mlp_ln = nn.LayerNorm(d)

    def forward(self, x):
        x = x + self.attn(self.attn_ln(x))
        return x + self.mlp(self.mlp_ln(x))


class WhisperStemClassifier(nn.Module):
    def __init__(self, fp32_frontend, d=64, h=4, n_ctx=64):
        super().__init__()
        self.frontend = KaldiFbank(fp32_frontend)
        self.conv1 = nn.Conv1d(N_MELS, d, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", _sinusoids(n_ctx, d))
        self.blocks = nn.ModuleList([ResidualAttentionBlock(d, h) for _ in range(2)])
        self.ln_post = nn.LayerNorm(d)
        self.head = nn.Linear(d, N_CLASSES)

    def forward(self, wav):
        x = self.frontend(wav)
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x)).permute(0, 2, 1)
        x = x + self.positional_embedding[: x.shape[1]].to(x.dtype)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_post(x).mean(dim=1))


def _make_clips(g, n, dur=0.5):
    # keyword-like synthetic clips: class = (pitch band, chirp direction); harmonics + noise, random level
    L = int(SR * dur)
    t = torch.arange(L) / SR
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    base = torch.tensor([140.0, 220.0, 330.0])[y // 2] * (1 + 0.08 * torch.randn(n, generator=g))
    chirp = torch.where(y % 2 == 0, 1.0, -1.0) * 0.5
    f_inst = base[:, None] * (1 + chirp[:, None] * (t[None, :] / dur - 0.5))
    phase = 2 * math.pi * torch.cumsum(f_inst, dim=1) / SR
    sig = sum((0.6 ** k) * torch.sin((k + 1) * phase) for k in range(4))
    env = torch.sigmoid((t / dur - 0.15) * 40) * torch.sigmoid((0.85 - t / dur) * 40)
    sig = sig * env[None, :] + 0.05 * torch.randn(n, L, generator=g)
    sig = sig / sig.abs().amax(dim=1, keepdim=True)
    gain = 10 ** (torch.empty(n, 1).uniform_(-1.5, -0.1, generator=g))  # -30..-2 dBFS peak
    return sig * gain, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = WhisperStemClassifier(fp32_frontend=fixed)
    steps, bs = 60, 12
    batches = [_make_clips(g, bs) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=scaler)
