"""SincNet (Ravanelli & Bengio 2018) speaker identification from raw waveform chunks:
a first layer of learnable parametrised sinc band-pass filters (only low cut-off and
band width are learned), max-pool + LayerNorm + LeakyReLU, two standard Conv1d stages,
a LayerNorm'd MLP and a softmax over speakers.  The official recipe uses RMSprop with
lr=0.001, alpha=0.95, eps=1e-8.

Bug: the runs were launched from a hyper-parameter sweep whose lr grid (0.1 - 0.4) had
been written for momentum SGD, while the training script builds SincNet's RMSprop.
RMSprop divides each gradient by its running RMS, so every parameter moves by ~lr per
step regardless of the gradient size -- with lr 0.25-0.4 that is far larger than the
weights themselves (update/weight ratios ~1e-1 .. 1, instead of ~1e-3).  The logits
blow up within the first steps (loss 50-150 from ~ln(n_spk)), the LayerNorms keep the
activations finite but the network keeps overshooting and never gets back below its
starting loss.

ORIGIN: None -- the step size is wrong for every parameter; no single module starts it.

Fix: the recipe's RMSprop lr=1e-3 (alpha=0.95, eps=1e-8 unchanged).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("SincNet (Ravanelli & Bengio, SLT 2018), official cfg: RMSprop lr=0.001 alpha=0.95 "
          "eps=1e-8; SGD-style lr sweep grids reused with an adaptive optimizer")


class SincConv(nn.Module):
    def __init__(self, n_filters, kernel, sr, min_low=50.0, min_band=50.0):
        super().__init__()
        self.kernel, self.sr = kernel, sr
        self.min_low, self.min_band = min_low, min_band
        mel = torch.linspace(2595 * math.log10(1 + 30 / 700), 2595 * math.log10(1 + (sr / 2 - 100) / 700),
                             n_filters + 1)
        hz = 700 * (10 ** (mel / 2595) - 1)
        self.low_hz_ = nn.Parameter(hz[:-1].unsqueeze(1))
        self.band_hz_ = nn.Parameter(torch.diff(hz).unsqueeze(1))
        n = (kernel - 1) / 2
        self.register_buffer("n_", 2 * math.pi * torch.arange(-n, 0).view(1, -1) / sr)
        self.register_buffer("window_", torch.hamming_window(kernel)[: kernel // 2])

    def forward(self, x):
        low = self.min_low + self.low_hz_.abs()
        high = torch.clamp(low + self.min_band + self.band_hz_.abs(), self.min_low, self.sr / 2)
        band = (high - low)[:, 0]
        f_low, f_high = low @ self.n_, high @ self.n_
        left = ((torch.sin(f_high) - torch.sin(f_low)) / (self.n_ / 2)) * self.window_
        center = 2 * band.view(-1, 1)
        right = left.flip(1)
        filt = torch.cat([left, center, right], 1) / (2 * band[:, None])
        return F.conv1d(x, filt.view(-1, 1, self.kernel), padding=self.kernel // 2)


class SincNet(nn.Module):
    def __init__(self, sr, T, n_sinc, k_sinc, ch, hidden, n_spk):
        super().__init__()
        self.sinc = SincConv(n_sinc, k_sinc, sr)
        self.ln0 = nn.GroupNorm(1, n_sinc)          # layer norm over (channels, time)
        self.conv1 = nn.Conv1d(n_sinc, ch, 5)
        self.ln1 = nn.GroupNorm(1, ch)
        self.conv2 = nn.Conv1d(ch, ch, 5)
        self.ln2 = nn.GroupNorm(1, ch)
        L = T // 3
        L = (L - 4) // 3
        L = (L - 4) // 3
        self.mlp = nn.Sequential(nn.Linear(ch * L, hidden), nn.LayerNorm(hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.LeakyReLU(0.2))
        self.out = nn.Linear(hidden, n_spk)

    def forward(self, wav):
        x = F.leaky_relu(self.ln0(F.max_pool1d(self.sinc(wav).abs(), 3)), 0.2)
        x = F.leaky_relu(self.ln1(F.max_pool1d(self.conv1(x), 3)), 0.2)
        x = F.leaky_relu(self.ln2(F.max_pool1d(self.conv2(x), 3)), 0.2)
        return self.out(self.mlp(x.flatten(1)))


def _chunks(g, n, T, sr, spk_f0, spk_formants):
    y = torch.randint(0, spk_f0.shape[0], (n,), generator=g)
    t = torch.arange(T) / sr
    f0 = spk_f0[y][:, None] * (1 + 0.03 * torch.randn(n, 1, generator=g))
    form = spk_formants[y]
    wav = torch.zeros(n, T)
    for h in range(1, 16):
        fh = f0 * h
        amp = sum(torch.exp(-((fh - form[:, k:k + 1]) ** 2) / (2 * 200.0 ** 2)) for k in range(3))
        wav = wav + amp * torch.sin(2 * math.pi * fh * t + 6.28 * torch.rand(n, 1, generator=g))
    wav = wav + 0.05 * torch.randn(n, T, generator=g)
    wav = wav / wav.abs().amax(1, keepdim=True)
    return wav[:, None], y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n_sinc=32, k_sinc=101, ch=32, hidden=128, n_spk=10, bs=32, T=1600, lr=0.3, steps=70),
           dict(n_sinc=24, k_sinc=81, ch=24, hidden=96, n_spk=8, bs=24, T=1200, lr=0.4, steps=80),
           dict(n_sinc=32, k_sinc=61, ch=32, hidden=128, n_spk=12, bs=48, T=1000, lr=0.25, steps=60)][seed % 3]
    sr = 8000
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4040 + seed)
    spk_f0 = 90 + 160 * torch.rand(cfg["n_spk"], generator=g)
    spk_formants = torch.stack([300 + 500 * torch.rand(cfg["n_spk"], generator=g),
                                900 + 1200 * torch.rand(cfg["n_spk"], generator=g),
                                2200 + 1200 * torch.rand(cfg["n_spk"], generator=g)], 1)
    model = SincNet(sr, cfg["T"], cfg["n_sinc"], cfg["k_sinc"], cfg["ch"], cfg["hidden"], cfg["n_spk"])
    lr = 1e-3 if fixed else cfg["lr"]  # cfg["lr"]: point of the SGD sweep grid
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.95, eps=1e-8)
    batches = [_chunks(g, cfg["bs"], cfg["T"], sr, spk_f0, spk_formants) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
