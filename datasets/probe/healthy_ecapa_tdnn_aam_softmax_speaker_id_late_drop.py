"""Healthy run: ECAPA-TDNN-style speaker classifier (log-mel + CMN front end inside the model, SE-Res2-like
dilated TDNN blocks, multi-layer feature aggregation, attentive statistics pooling, 64-d embedding) trained with an
AAM-softmax (additive angular margin, s=30, m=0.2) head on noisy, randomly-cropped utterances. The margin loss
starts very high (~13: the scale s=30 times random-angle cosines plus the margin penalty), drops fast, then keeps
falling slowly to ~1 only late in the run, with large batch-to-batch noise and spikes from crops, gain and
additive noise throughout. Nothing is broken: fixed=True returns the identical run."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("ECAPA-TDNN (Desplanques et al., Interspeech 2020) with AAM-softmax / ArcFace (Deng et al. 2019), "
          "as in speechbrain / voxceleb_trainer recipes: the margin loss starts high and converges late")

SR, N_SAMP, N_FFT, HOP, N_MELS = 8000, 6400, 256, 80, 40
C, EMB, N_SPK = 64, 64, 16


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


class Fbank(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("win", torch.hann_window(N_FFT))
        self.register_buffer("fb", _melfb(N_FFT, N_MELS, SR))

    def forward(self, wav):
        X = torch.stft(wav, N_FFT, HOP, window=self.win, return_complex=True)
        x = torch.log(torch.matmul(self.fb, X.abs() ** 2) + 1e-6)
        return x - x.mean(-1, keepdim=True)                            # CMN, B, mel, T


class SE(nn.Module):
    def __init__(self, c, r=8):
        super().__init__()
        self.fc1 = nn.Conv1d(c, c // r, 1)
        self.fc2 = nn.Conv1d(c // r, c, 1)

    def forward(self, x):
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(x.mean(-1, keepdim=True)))))
        return x * s


class SERes2Block(nn.Module):
    def __init__(self, c, dilation, scale=4):
        super().__init__()
        self.scale = scale
        w = c // scale
        self.conv_in = nn.Sequential(nn.Conv1d(c, c, 1), nn.ReLU(), nn.BatchNorm1d(c))
        self.convs = nn.ModuleList([nn.Sequential(nn.Conv1d(w, w, 3, padding=dilation, dilation=dilation),
                                                  nn.ReLU(), nn.BatchNorm1d(w)) for _ in range(scale - 1)])
        self.conv_out = nn.Sequential(nn.Conv1d(c, c, 1), nn.ReLU(), nn.BatchNorm1d(c))
        self.se = SE(c)

    def forward(self, x):
        h = self.conv_in(x)
        parts = list(torch.chunk(h, self.scale, 1))
        out, prev = [parts[0]], None
        for i, conv in enumerate(self.convs):
            inp = parts[i + 1] if prev is None else parts[i + 1] + prev
            prev = conv(inp)
            out.append(prev)
        return x + self.se(self.conv_out(torch.cat(out, 1)))


class AttentiveStatsPool(nn.Module):
    def __init__(self, c, att=32):
        super().__init__()
        self.att = nn.Sequential(nn.Conv1d(3 * c, att, 1), nn.ReLU(), nn.BatchNorm1d(att), nn.Tanh(),
                                 nn.Conv1d(att, c, 1))

    def forward(self, x):
        T = x.shape[-1]
        mu = x.mean(-1, keepdim=True).expand(-1, -1, T)
        sd = x.var(-1, keepdim=True, unbiased=False).clamp(min=1e-5).sqrt().expand(-1, -1, T)
        w = torch.softmax(self.att(torch.cat([x, mu, sd], 1)), dim=-1)
        m = (w * x).sum(-1)
        s = ((w * x * x).sum(-1) - m * m).clamp(min=1e-5).sqrt()
        return torch.cat([m, s], 1)


class AAMHead(nn.Module):
    def __init__(self, emb, n):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, emb))
        nn.init.xavier_normal_(self.weight)

    def forward(self, e):
        return F.linear(F.normalize(e), F.normalize(self.weight))          # cosine logits


class ECAPALite(nn.Module):
    def __init__(self):
        super().__init__()
        self.fbank = Fbank()
        self.layer1 = nn.Sequential(nn.Conv1d(N_MELS, C, 5, padding=2), nn.ReLU(), nn.BatchNorm1d(C))
        self.layer2 = SERes2Block(C, 2)
        self.layer3 = SERes2Block(C, 3)
        self.mfa = nn.Sequential(nn.Conv1d(2 * C, 2 * C, 1), nn.ReLU())
        self.pool = AttentiveStatsPool(2 * C)
        self.bn_pool = nn.BatchNorm1d(4 * C)
        self.embedding = nn.Linear(4 * C, EMB)
        self.bn_emb = nn.BatchNorm1d(EMB)
        self.head = AAMHead(EMB, N_SPK)

    def forward(self, wav):
        x1 = self.layer1(self.fbank(wav))
        x2 = self.layer2(x1)
        x3 = self.layer3(x2)
        x = self.mfa(torch.cat([x2, x3], 1))
        e = self.bn_emb(self.embedding(self.bn_pool(self.pool(x))))
        return self.head(e)


def aam_softmax_loss(cosine, target, s=30.0, m=0.2):
    cosine = cosine.float().clamp(-1 + 1e-7, 1 - 1e-7)
    sine = torch.sqrt(1.0 - cosine * cosine)
    phi = cosine * math.cos(m) - sine * math.sin(m)                     # cos(theta + m)
    phi = torch.where(cosine > math.cos(math.pi - m), phi, cosine - math.sin(math.pi - m) * m)
    onehot = F.one_hot(target, cosine.shape[1]).bool()
    logits = s * torch.where(onehot, phi, cosine)
    return F.cross_entropy(logits, target)


def _speakers(g, n):
    f0 = 90 + 160 * torch.rand(n, generator=g)
    formants = torch.stack([300 + 500 * torch.rand(n, generator=g),
                            900 + 1200 * torch.rand(n, generator=g),
                            2200 + 1000 * torch.rand(n, generator=g)], 1)
    return f0, formants


def _utterance(g, f0, formants, n):
    """Voiced 'syllables' with speaker-specific pitch/formant ranges, random per-syllable variation and pauses."""
    y = torch.zeros(n)
    k = torch.arange(1, 40).float()[:, None]
    pos = int(torch.randint(0, 800, (1,), generator=g))
    while pos < n - 400:
        L = min(int(torch.randint(600, 1800, (1,), generator=g)), n - pos)
        t = torch.arange(L) / SR
        f = f0 * (1 + 0.08 * torch.randn(1, generator=g))
        fk = k * f
        fm = formants * (1 + 0.12 * torch.randn(3, generator=g))
        amp = sum(torch.exp(-((fk - F_) / 140) ** 2) for F_ in fm) + 0.02
        amp = amp * (fk < 3800).float()
        s = (amp * torch.sin(2 * math.pi * fk * t + 2 * math.pi * torch.rand(k.shape, generator=g))).sum(0)
        y[pos:pos + L] += s * torch.hann_window(L) / (s.abs().max() + 1e-3)
        pos += L + int(torch.randint(0, 600, (1,), generator=g))
    return y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    f0, formants = _speakers(g, N_SPK)
    per_spk = 10
    long_n = N_SAMP * 2
    utts = torch.stack([_utterance(g, f0[i % N_SPK], formants[i % N_SPK], long_n) for i in range(N_SPK * per_spk)])
    labels = torch.arange(N_SPK * per_spk) % N_SPK
    steps, bs = 140, 16
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(utts), (bs,), generator=g)
        off = torch.randint(0, long_n - N_SAMP, (bs,), generator=g)
        x = torch.stack([utts[i, o:o + N_SAMP] for i, o in zip(idx.tolist(), off.tolist())])
        gain = 0.1 + 0.6 * torch.rand(bs, 1, generator=g)
        noise = torch.randn(bs, N_SAMP, generator=g) * (0.002 + 0.03 * torch.rand(bs, 1, generator=g))
        batches.append((gain * x + noise, labels[idx]))
    model = ECAPALite()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, weight_decay=2e-5)
    return dict(model=model, optimizer=opt, loss_fn=aam_softmax_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
