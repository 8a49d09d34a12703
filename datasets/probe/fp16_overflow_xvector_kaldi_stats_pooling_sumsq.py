"""x-vector speaker-ID TDNN (log-mel front end computed inside the model) trained with float16 autocast.
The statistics pooling layer is a port of Kaldi's StatisticsExtraction/Pooling components: it accumulates
sum(x) and sum(x*x) over all frames and only then divides by the frame count. Under fp16 autocast the TDNN
activations are float16, so sum(x*x) over ~190 frames of ReLU outputs (rms ~7, some channels ~20) passes
65504 -> inf, std = sqrt(inf - mu^2) -> inf/NaN and the loss is non-finite from the first steps (a GradScaler
is present but cannot help: the overflow is in the forward pass).
fixed=True: the pooling statistics are computed in float32 (autocast disabled, input cast with .float())."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "pool"
SOURCE = ("Kaldi nnet3 StatisticsExtractionComponent ported to PyTorch (sum and sum-of-squares accumulators); "
          "speechbrain/espnet AMP reports 'x-vector/ECAPA loss is NaN with fp16, fine in fp32' fixed by computing "
          "pooling statistics in float32 (cf. fairseq's explicit .float() casts before variance-like reductions)")

SR, N_SAMP, N_FFT, HOP, N_MELS = 8000, 16000, 256, 80, 40


def _melfb(n_fft, n_mels, sr):
    def hz2mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)
    m = torch.linspace(hz2mel(0.0), hz2mel(sr / 2), n_mels + 2)
    hz = 700.0 * (10 ** (m / 2595.0) - 1.0)
    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    fb = torch.zeros(n_mels, n_fft // 2 + 1)
    for i in range(n_mels):
        l, c, r = hz[i], hz[i + 1], hz[i + 2]
        fb[i] = torch.clamp(torch.minimum((freqs - l) / (c - l), (r - freqs) / (r - c)), min=0)
    return fb


class LogMel(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("win", torch.hann_window(N_FFT))
        self.register_buffer("fb", _melfb(N_FFT, N_MELS, SR))

    def forward(self, wav):
        X = torch.stft(wav, N_FFT, HOP, window=self.win, return_complex=True, center=False)
        power = X.real ** 2 + X.imag ** 2
        return torch.log(torch.matmul(self.fb, power) + 1e-6)       # B, mel, T


class TDNN(nn.Module):
    """Kaldi-style spliced affine layer: concatenate frames at the given offsets, affine, ReLU."""
    def __init__(self, i, o, ctx):
        super().__init__()
        self.ctx = ctx
        self.lin = nn.Linear(i * len(ctx), o)
        nn.init.kaiming_normal_(self.lin.weight, nonlinearity="relu")
        nn.init.zeros_(self.lin.bias)

    def forward(self, x):                                           # B, T, C
        lo, hi = min(self.ctx), max(self.ctx)
        T = x.shape[1] - (hi - lo)
        spliced = torch.cat([x[:, c - lo:c - lo + T] for c in self.ctx], -1)
        return F.relu(self.lin(spliced))


class StatsPool(nn.Module):
    """Kaldi: accumulate count, sum x, sum x^2 over frames; mean = sum/count, var = sumsq/count - mean^2."""
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32

    def forward(self, h):                                           # B, T, C
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._stats(h.float())
        return self._stats(h)

    @staticmethod
    def _stats(h):
        count = h.shape[1]
        s1 = h.sum(1)
        s2 = (h * h).sum(1)
        mean = s1 / count
        var = s2 / count - mean * mean
        return torch.cat([mean, var.clamp(min=1e-5).sqrt()], 1)


class XVector(nn.Module):
    def __init__(self, n_spk, fp32_pool):
        super().__init__()
        self.fbank = LogMel()
        self.tdnn1 = TDNN(N_MELS, 48, [-2, 0, 2])
        self.tdnn2 = TDNN(48, 48, [-2, 0, 2])
        self.tdnn3 = TDNN(48, 64, [0])
        self.pool = StatsPool(fp32_pool)
        self.segment6 = nn.Linear(128, 64)
        self.bn6 = nn.BatchNorm1d(64)
        self.out = nn.Linear(64, n_spk)

    def forward(self, wav):
        x = self.fbank(wav).transpose(1, 2)
        h = self.tdnn3(self.tdnn2(self.tdnn1(x)))
        return self.out(self.bn6(F.relu(self.segment6(self.pool(h)))))


def _speakers(g, n):
    f0 = 90 + 160 * torch.rand(n, generator=g)
    formants = torch.stack([300 + 500 * torch.rand(n, generator=g),
                            900 + 1200 * torch.rand(n, generator=g),
                            2200 + 1000 * torch.rand(n, generator=g)], 1)
    return f0, formants


def _utterance(g, f0, formants):
    t = torch.arange(N_SAMP) / SR
    vib = 2 + 3 * torch.rand(1, generator=g)
    f = f0 * (1 + 0.05 * torch.randn(1, generator=g)) * (1 + 0.03 * torch.sin(2 * math.pi * vib * t))
    phase = 2 * math.pi * torch.cumsum(f, 0) / SR
    y = torch.zeros(N_SAMP)
    for k in range(1, int(3800 / float(f0)) + 1):
        env = sum(torch.exp(-((k * f0 - Fm) / 150) ** 2) for Fm in formants) + 0.02
        y += env * torch.sin(k * phase + 2 * math.pi * torch.rand(1, generator=g))
    y = y / y.abs().max()
    y = 0.3 * (0.5 + torch.rand(1, generator=g)) * y + 0.01 * torch.randn(N_SAMP, generator=g)
    a = int(torch.randint(0, N_SAMP // 4, (1,), generator=g))      # leading / trailing silence
    b = int(torch.randint(0, N_SAMP // 4, (1,), generator=g))
    y[:a] = 0.001 * torch.randn(a, generator=g)
    y[N_SAMP - b:] = 0.001 * torch.randn(b, generator=g)
    return y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_spk, per_spk, steps, bs = 12, 8, 100, 8
    f0, formants = _speakers(g, n_spk)
    wavs, labels = [], []
    for i in range(n_spk * per_spk):
        s = i % n_spk
        wavs.append(_utterance(g, f0[s], formants[s]))
        labels.append(s)
    wavs, labels = torch.stack(wavs), torch.tensor(labels)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(wavs), (bs,), generator=g)
        batches.append((wavs[idx], labels[idx]))
    model = XVector(n_spk, fp32_pool=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    scaler = torch.amp.GradScaler("cpu")
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
