"""Conformer keyword classifier (log-mel front end inside the model, macaron feed-forward, MHSA, convolution
module with GLU + depthwise conv + BatchNorm + Swish) trained on clips augmented on the fly with background noise
at a random SNR. The noise bank has one recording whose tail is zero padding (digital silence); mid-run a crop
falls entirely inside it, the SNR mixer computes scale = sqrt(P_speech / (P_noise * 10^(snr/10))) = inf and
inf * 0 = NaN samples, so that batch's waveform is NaN -> NaN loss -> NaN weights for the rest of the run.
fixed=True: the loader drops the non-finite example from that batch (same data otherwise)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("On-the-fly background-noise augmentation at a target SNR with a silent noise segment (division by "
          "zero noise power): iver56/audiomentations AddBackgroundNoise / speechbrain AddNoise reports of NaN "
          "batches from silent noise files; Conformer (Gulati et al. 2020) KWS/command recognition")

SR, N_SAMP, N_FFT, HOP, N_MELS, D = 8000, 6400, 256, 128, 40, 64
N_WORDS = 10


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
        X = torch.stft(wav, N_FFT, HOP, window=self.win, return_complex=True)
        mel = torch.log(torch.matmul(self.fb, X.abs() ** 2) + 1e-6)
        return mel.transpose(1, 2)                                       # B, T, mel


class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return self.net(x)


class ConvModule(nn.Module):
    def __init__(self, d, k=15):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)

    def forward(self, x):                                                # B, T, d
        y = self.ln(x).transpose(1, 2)
        y = F.glu(self.pw1(y), dim=1)
        y = F.silu(self.bn(self.dw(y)))
        return self.pw2(y).transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, d, heads=4):
        super().__init__()
        self.ff1 = FeedForward(d)
        self.ln_att = nn.LayerNorm(d)
        self.att = nn.MultiheadAttention(d, heads, batch_first=True)
        self.conv = ConvModule(d)
        self.ff2 = FeedForward(d)
        self.ln_out = nn.LayerNorm(d)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        h = self.ln_att(x)
        x = x + self.att(h, h, h, need_weights=False)[0]
        x = x + self.conv(x)
        x = x + 0.5 * self.ff2(x)
        return self.ln_out(x)


class ConformerKWS(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = LogMel()
        self.subsample = nn.Conv1d(N_MELS, D, 3, stride=2, padding=1)
        self.pos = nn.Parameter(0.02 * torch.randn(1, 32, D))
        self.blocks = nn.Sequential(ConformerBlock(D), ConformerBlock(D))
        self.head = nn.Linear(D, N_WORDS)

    def forward(self, wav):
        x = self.frontend(wav)
        x = self.subsample(x.transpose(1, 2)).transpose(1, 2)
        x = self.blocks(x + self.pos[:, :x.shape[1]])
        return self.head(x.mean(1))


def _word(g, phones, seq):
    f0 = 100 + 120 * torch.rand(1, generator=g)
    k = torch.arange(1, 30).float()[:, None]
    y = torch.zeros(N_SAMP)
    start = int(torch.randint(0, 1600, (1,), generator=g))
    seg = 1500
    t = torch.arange(seg) / SR
    for j, p in enumerate(seq):
        F1, F2 = phones[p]
        fk = k * f0
        amp = (torch.exp(-((fk - F1) / 120) ** 2) + torch.exp(-((fk - F2) / 160) ** 2) + 0.01) * (fk < 3800).float()
        s = (amp * torch.sin(2 * math.pi * fk * t + 2 * math.pi * torch.rand(k.shape, generator=g))).sum(0)
        a = start + j * seg
        y[a:a + seg] += s * torch.hann_window(seg)
    return 0.5 * (0.4 + torch.rand(1, generator=g)) * y / y.abs().max()


def _noise_bank(g):
    """Four 'recorded' background noises (coloured noise + hum); the last one ends in zero padding."""
    bank = []
    for i in range(4):
        w = torch.randn(SR * 6, generator=g)
        a = 0.6 + 0.35 * torch.rand(1, generator=g)
        w = torch.cumsum(w, 0) * (1 - a) + w * a                            # mix of white and brown noise
        w = w - torch.linspace(float(w[0]), float(w[-1]), len(w))
        w = w + 0.3 * w.std() * torch.sin(2 * math.pi * (50 + 10 * i) * torch.arange(len(w)) / SR)
        bank.append(w / w.std())
    bank[3][SR * 4:] = 0.0                                               # 2 s of digital silence at the end
    return bank


def _mix_at_snr(speech, noise, snr_db):
    p_s = speech.pow(2).mean()
    p_n = noise.pow(2).mean()
    scale = torch.sqrt(p_s / (p_n * 10 ** (snr_db / 10)))
    return speech + scale * noise


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    phones = torch.stack([200 + 700 * torch.rand(5, generator=g), 900 + 1500 * torch.rand(5, generator=g)], 1)
    words = []
    while len(words) < N_WORDS:
        w = tuple(int(v) for v in torch.randint(0, 5, (3,), generator=g))
        if w not in words and len(set(w)) > 1:
            words.append(w)
    clean = torch.stack([_word(g, phones, words[i % N_WORDS]) for i in range(N_WORDS * 20)])
    labels = torch.arange(N_WORDS * 20) % N_WORDS
    noises = _noise_bank(g)
    steps, bs = 160, 16
    bad_step = int(torch.randint(70, 110, (1,), generator=g))
    batches = []
    for step in range(steps):
        idx = torch.randint(0, len(clean), (bs,), generator=g)
        wavs = []
        for j, i in enumerate(idx):
            nb = int(torch.randint(0, 3, (1,), generator=g))                # usually a fully recorded noise
            off = int(torch.randint(0, SR * 4 - N_SAMP, (1,), generator=g))
            if step == bad_step and j == 0:                                # crop lands in the zero-padded tail
                nb, off = 3, SR * 4 + int(torch.randint(0, SR * 2 - N_SAMP, (1,), generator=g))
            snr = 5 + 15 * float(torch.rand(1, generator=g))
            wavs.append(_mix_at_snr(clean[i], noises[nb][off:off + N_SAMP], snr))
        x, y = torch.stack(wavs), labels[idx]
        if fixed:                                                          # loader-side sanity filter
            keep = torch.isfinite(x).all(1)
            x, y = x[keep], y[keep]
        batches.append((x, y))
    model = ConformerKWS()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
