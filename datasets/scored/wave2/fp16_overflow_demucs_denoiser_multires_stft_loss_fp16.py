"""Demucs-style waveform speech denoiser trained under fp16 autocast with a GradScaler and the usual
L1 + multi-resolution STFT loss (spectral convergence + log-magnitude). The STFT of the loss is a
conv1d with a fixed Hann-windowed DFT basis, so under autocast it runs in fp16, and the spectral
convergence ||S_clean - S_est||_F / ||S_clean||_F is computed as a sum of squared magnitudes over
all frames and bins. For a waveform in [-1, 1] that sum is ~1e5-1e6 (Parseval: n_fft times the
windowed energy, summed over frames), far beyond 65504: both norms become inf in fp16 and
inf / inf makes the loss NaN from the first step. The GradScaler cannot help because the forward
value itself overflows. Fixed: the STFT loss is computed in fp32 (autocast disabled, inputs cast to
float), as parallel_wavegan/auraloss-style losses do; the model still runs in fp16."""
import math
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None  # the overflow is born in the loss's STFT norm, outside any model module
SOURCE = "Multi-resolution STFT loss (Parallel WaveGAN, Demucs denoiser); AMP reports of NaN spectral-convergence loss until the STFT loss is computed in float32"


class DemucsLite(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv1d(1, ch, 8, 4, padding=2), nn.ReLU(), nn.Conv1d(ch, 2 * ch, 1), nn.GLU(1))
        self.enc2 = nn.Sequential(nn.Conv1d(ch, 2 * ch, 8, 4, padding=2), nn.ReLU(), nn.Conv1d(2 * ch, 4 * ch, 1), nn.GLU(1))
        self.dec2 = nn.Sequential(nn.Conv1d(2 * ch, 4 * ch, 1), nn.GLU(1), nn.ConvTranspose1d(2 * ch, ch, 8, 4, padding=2), nn.ReLU())
        self.dec1 = nn.Sequential(nn.Conv1d(ch, 2 * ch, 1), nn.GLU(1), nn.ConvTranspose1d(ch, 1, 8, 4, padding=2))

    def forward(self, noisy):  # (B, 1, T)
        e1 = self.enc1(noisy)
        e2 = self.enc2(e1)
        d2 = self.dec2(e2) + e1
        return self.dec1(d2)


def _stft_mag(x, n_fft):
    hop = n_fft // 4
    n = torch.arange(n_fft, dtype=torch.float32)
    win = torch.hann_window(n_fft, periodic=True)
    k = torch.arange(n_fft // 2 + 1, dtype=torch.float32).unsqueeze(1)
    basis = torch.cat([torch.cos(2 * math.pi * k * n / n_fft), -torch.sin(2 * math.pi * k * n / n_fft)]) * win
    spec = F.conv1d(x, basis.unsqueeze(1), stride=hop)            # fp16 under autocast
    re, im = spec.chunk(2, 1)
    return (re * re + im * im + 1e-7).sqrt()


def _mrstft(est, clean):
    loss = 0.0
    for n_fft in (128, 256, 512):
        s_e, s_c = _stft_mag(est, n_fft), _stft_mag(clean, n_fft)
        sc = (s_c - s_e).pow(2).sum().sqrt() / s_c.pow(2).sum().sqrt()
        mag = F.l1_loss(torch.log(s_e), torch.log(s_c))
        loss = loss + sc + mag
    return loss / 3


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    ch = [12, 16, 10][seed % 3]
    bs = [4, 3, 5][seed % 3]
    steps = [60, 50, 70][seed % 3]
    T = 2048
    t = torch.arange(T, dtype=torch.float32) / 8000.0
    def make(n):
        f0 = 100 + 150 * torch.rand(n, 1, generator=g)
        amp = 0.5 + 0.4 * torch.rand(n, 1, generator=g)
        clean = sum(torch.sin(2 * math.pi * h * f0 * t + torch.rand(n, 1, generator=g) * 6.28) / h for h in range(1, 6))
        env = 0.5 + 0.5 * torch.sin(2 * math.pi * 3 * t + torch.rand(n, 1, generator=g) * 6.28)
        clean = (amp * clean * env / 2).unsqueeze(1)
        noisy = clean + 0.1 * torch.randn(n, 1, T, generator=g)
        return noisy, clean
    pool = [make(bs) for _ in range(10)]
    batches = [pool[i % 10] for i in range(steps)]
    model = DemucsLite(ch)
    opt = torch.optim.Adam(model.parameters(), lr=[3e-3, 2e-3, 3e-3][seed % 3], betas=(0.9, 0.999))

    def loss_fn(est, clean):
        l1 = F.l1_loss(est, clean)
        if fixed:
            with torch.autocast("cpu", enabled=False):
                return l1 + _mrstft(est.float(), clean.float())
        return l1 + _mrstft(est, clean)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
