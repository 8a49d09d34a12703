"""Replay/TTS anti-spoofing ResNet with a conv-STFT log-power frontend run under fp16 autocast.

Mechanism: a compact ASVspoof-style countermeasure: a learnable-free STFT implemented as a
Conv1d with cos/sin DFT kernels (nnAudio style, so that it runs inside the model; no
analysis window, i.e. rectangular frames like torch.stft's window=None default),
power = re^2 + im^2, log compression, then a small residual CNN and a 2-way head. Training
uses torch.autocast(float16) for speed; the frontend's Conv1d is autocast to fp16, so the
real/imaginary parts and the power are fp16 tensors. Normal utterances have peak |X| of a few
tens, but the replay-attack portion of the corpus contains clipped, near full-scale
recordings (square-wave-like, fundamental amplitude ~1.27): with 1024-point rectangular
frames the peak |X| is up to ~1.27 * 512 = 650 and re^2 + im^2 ~ 1e5-4e5 > 65504 -> inf in
fp16. log(inf) = inf,
the first BatchNorm computes inf - inf = NaN and the loss is NaN from the first batch that
contains such a clip. The same model in fp32 (or with the frontend kept in fp32) is calm.

ORIGIN: `frontend`, the conv-STFT module whose power computation is the first op producing
a value past the fp16 range.

Fix: run the frontend (STFT conv + power + log) in fp32 by disabling autocast inside it;
the ResNet still runs under fp16 autocast and the data are unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "frontend"
SOURCE = ("ASVspoof 2019/2021 countermeasures with conv-based STFT frontends (nnAudio "
          "STFT/log-spectrogram layers) trained with AMP; |X|^2 of clipped replay audio "
          "exceeds the fp16 max -> NaN loss (known 'power spectrogram in half' pitfall)")


class ConvSTFTLogPower(nn.Module):
    def __init__(self, n_fft, hop, n_bins, pool, fp32_power):
        super().__init__()
        n = torch.arange(n_fft).float()
        k = torch.arange(n_bins).float().unsqueeze(1)
        # no analysis window, like torch.stft(window=None): rectangular frames
        ang = 2 * math.pi * k * n / n_fft
        kernels = torch.cat([torch.cos(ang), -torch.sin(ang)]).unsqueeze(1)
        self.register_buffer("kernels", kernels)
        self.hop, self.n_bins, self.pool = hop, n_bins, pool
        self.fp32_power = fp32_power

    def _spec(self, wav):
        spec = F.conv1d(wav.unsqueeze(1), self.kernels, stride=self.hop)
        re, im = spec[:, :self.n_bins], spec[:, self.n_bins:]
        power = re * re + im * im
        logp = torch.log(power + 1e-6)
        return F.avg_pool1d(logp.transpose(1, 2), self.pool).transpose(1, 2)

    def forward(self, wav):
        if self.fp32_power:
            with torch.autocast("cpu", enabled=False):
                return self._spec(wav.float()).unsqueeze(1)
        return self._spec(wav).unsqueeze(1)


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(h)))


class SpoofResNet(nn.Module):
    def __init__(self, n_fft, hop, n_bins, pool, ch, blocks, fp32_power):
        super().__init__()
        self.frontend = ConvSTFTLogPower(n_fft, hop, n_bins, pool, fp32_power)
        self.stem = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(ch), nn.ReLU())
        self.blocks = nn.Sequential(*[ResBlock(ch) for _ in range(blocks)])
        self.head = nn.Linear(ch, 2)

    def forward(self, wav):
        h = self.blocks(self.stem(self.frontend(wav)))
        return self.head(h.mean(dim=(2, 3)))


def _clips(g, n, length, sr, loud_rows):
    t = torch.arange(length).float() / sr
    y = (torch.rand(n, generator=g) < 0.5).long()  # 1 = spoof
    f0 = 110 + 120 * torch.rand(n, 1, generator=g)
    amp = 0.05 + 0.1 * torch.rand(n, 1, generator=g)
    wav = torch.zeros(n, length)
    for h in range(1, 6):
        wav = wav + amp / h * torch.sin(2 * math.pi * h * f0 * t + 6.28 * torch.rand(n, 1, generator=g))
    # vocoder artefact of the spoofed class: a steady buzz at 1.5-1.9 kHz
    fb = 1500 + 400 * torch.rand(n, 1, generator=g)
    wav = wav + (y.float().unsqueeze(1) * 0.1) * torch.sin(2 * math.pi * fb * t)
    wav = wav + 0.003 * torch.randn(n, length, generator=g)
    for r in loud_rows:
        # clipped replay recording: overdriven to full scale (square-wave-like)
        wav[r] = torch.clamp(40.0 * wav[r], -1.0, 1.0)
    return wav, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8000 + seed)
    cfg = [
        dict(ch=12, blocks=2, bs=16, lr=3e-3, steps=60, loud_step=21, length=4096),
        dict(ch=16, blocks=1, bs=12, lr=2e-3, steps=50, loud_step=33, length=3584),
        dict(ch=8, blocks=3, bs=8, lr=3e-3, steps=70, loud_step=12, length=4096),
    ][seed % 3]
    sr, n_fft, hop, n_bins, pool = 16000, 1024, 256, 128, 4
    model = SpoofResNet(n_fft, hop, n_bins, pool, cfg["ch"], cfg["blocks"], fp32_power=fixed)
    batches = []
    for step in range(cfg["steps"]):
        loud = [0] if step >= cfg["loud_step"] and step % 4 == cfg["loud_step"] % 4 else []
        batches.append(_clips(g, cfg["bs"], cfg["length"], sr, loud))
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=cfg["steps"], amp_dtype=torch.float16)
