"""An audio classifier (machine-sound / alarm-tone recognition) computes its log-mel features inside
the model with an nnAudio-style STFT front-end: frames of 1024 samples are windowed and projected
onto a fixed DFT basis with a linear layer, the power spectrum is re^2 + im^2, a fixed mel matrix
pools it to 40 bands and log() compresses it; a small conv1d classifier follows. The whole forward
pass runs under float16 autocast to speed up training. The waveforms are ordinary [-1, 1] audio, but
an unnormalised 1024-point DFT of a strong tone gives |X| ~ A * N / 4 ~ 200 (Hann window), so its
power is ~4e4 and the mel band that pools a few such bins passes the float16 maximum 65504. Quiet
clips are fine; the first batch with a loud tonal clip gets inf in the front-end, log(inf) = inf
propagates into the conv and the loss is inf/NaN, after which the weights are NaN. A GradScaler
would not help (the overflow is in the forward pass). The fix keeps the front-end in float32
(autocast disabled for the STFT/mel/log block, as torchaudio/nnAudio recipes recommend); the rest of
the model still runs in float16 and everything else is identical.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "frontend"
SOURCE = ("Known AMP pitfall: spectrogram/mel front-ends computed in fp16 overflow (power spectra of "
          "[-1,1] audio exceed 65504), e.g. nnAudio and torchaudio issues about inf/NaN "
          "MelSpectrogram under autocast; recipes compute features in fp32.")

N_FFT = 1024
HOP = 512
N_MELS = 40
SR = 16000
LEN = 4096
N_CLASSES = 5


def _mel_matrix():
    f = torch.linspace(0, SR / 2, N_FFT // 2 + 1)
    mel = lambda hz: 2595 * torch.log10(1 + hz / 700)
    m_pts = torch.linspace(float(mel(torch.tensor(60.0))), float(mel(torch.tensor(7600.0))), N_MELS + 2)
    hz_pts = 700 * (10 ** (m_pts / 2595) - 1)
    fb = torch.zeros(N_MELS, N_FFT // 2 + 1)
    for i in range(N_MELS):
        lo, c, hi = hz_pts[i], hz_pts[i + 1], hz_pts[i + 2]
        fb[i] = torch.clamp(torch.minimum((f - lo) / (c - lo), (hi - f) / (hi - c)), min=0)
    return fb


class STFTMelFrontend(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32
        n = torch.arange(N_FFT).float()
        k = torch.arange(N_FFT // 2 + 1).float()
        ang = 2 * math.pi * k.view(-1, 1) * n.view(1, -1) / N_FFT
        win = torch.hann_window(N_FFT, periodic=True)
        self.register_buffer("dft_basis", torch.cat([torch.cos(ang) * win, -torch.sin(ang) * win], 0))
        self.register_buffer("mel", _mel_matrix())

    def _feats(self, wav):
        frames = wav.unfold(-1, N_FFT, HOP)                      # (B, T, N_FFT)
        spec = nn.functional.linear(frames, self.dft_basis)     # autocast: fp16 matmul
        re, im = spec.chunk(2, dim=-1)
        power = re * re + im * im
        melspec = power @ self.mel.T
        return torch.log(melspec + 1e-6).transpose(1, 2)       # (B, N_MELS, T)

    def forward(self, wav):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._feats(wav.float())
        return self._feats(wav)


class ToneClassifier(nn.Module):
    def __init__(self, fp32_frontend):
        super().__init__()
        self.frontend = STFTMelFrontend(fp32_frontend)
        self.norm = nn.BatchNorm1d(N_MELS)
        self.conv = nn.Sequential(nn.Conv1d(N_MELS, 32, 3, padding=1), nn.ReLU(),
                                  nn.Conv1d(32, 32, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(32, N_CLASSES)

    def forward(self, wav):
        h = self.conv(self.norm(self.frontend(wav)))
        return self.head(h.mean(-1))


def _batch(g, B, n_loud):
    t = torch.arange(LEN).float() / SR
    label = torch.randint(0, N_CLASSES, (B,), generator=g)
    base = torch.tensor([440.0, 880.0, 1500.0, 2500.0, 4000.0])[label].view(B, 1)
    f0 = base * (1 + 0.03 * torch.randn(B, 1, generator=g))
    amp = 0.02 + 0.3 * torch.rand(B, 1, generator=g)
    if n_loud:   # clips from the later, close-miked recording sessions
        amp[:n_loud] = 0.7 + 0.25 * torch.rand(n_loud, 1, generator=g)
    wav = amp * torch.sin(2 * math.pi * f0 * t + 6.283 * torch.rand(B, 1, generator=g))
    wav = wav + 0.5 * amp * torch.sin(2 * math.pi * 2 * f0 * t)
    wav = wav + 0.01 * torch.randn(B, LEN, generator=g)
    return wav.clamp(-1, 1), label


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4400 + seed)
    steps = 80
    batches = [_batch(g, 16, n_loud=(3 if s >= 30 else 0)) for s in range(steps)]
    model = ToneClassifier(fp32_frontend=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    ce = nn.CrossEntropyLoss()

    def loss_fn(logits, y):
        return ce(logits.float(), y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
