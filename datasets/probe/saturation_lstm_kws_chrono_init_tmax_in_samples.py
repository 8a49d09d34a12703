"""LSTM keyword spotter on a log-mel + per-utterance CMVN front end computed inside the model, trained with
SGD+momentum. The LSTM gate biases use chrono initialisation (Tallec & Ollivier 2018: b_f ~ log U(1, T_max-1),
b_i = -b_f), but T_max was taken from the data config's max_samples (160000 = 10 s at 16 kHz, copied from a
sample-level WaveRNN recipe) while this LSTM runs on ~31 *frames*. b_f ~ 11 and b_i ~ -11: every forget gate sits
at sigmoid ~ 1 and every input gate at ~2e-5, the cell never takes in the input, the gradients through the
saturated gates vanish and the loss stays at log(8) while the correctly initialised model converges.
fixed=True: T_max = number of LSTM time steps (frames), nothing else changes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "lstm"
SOURCE = ("Chrono initialization (Tallec & Ollivier, ICLR 2018, 'Can recurrent neural networks warp time?') "
          "applied with T_max measured in audio samples instead of RNN steps; saturated LSTM gates / vanishing "
          "gradients as in Hochreiter & Schmidhuber 1997, Bengio et al. 1994")

SR, N_SAMP, N_FFT, HOP, N_MELS, HIDDEN = 8000, 4800, 512, 160, 32, 64
MAX_SAMPLES = 160000                  # data config of the sample-level recipe the init was copied from
N_WORDS = 8
N_FRAMES = N_SAMP // HOP + 1                                          # torch.stft(center=True)


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


class LogMelCMVN(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("win", torch.hann_window(N_FFT))
        self.register_buffer("fb", _melfb(N_FFT, N_MELS, SR))

    def forward(self, wav):
        X = torch.stft(wav, N_FFT, HOP, window=self.win, return_complex=True)
        mel = torch.log(torch.matmul(self.fb, X.abs() ** 2) + 1e-6)     # B, mel, T
        mel = (mel - mel.mean(-1, keepdim=True)) / (mel.std(-1, keepdim=True) + 1e-5)
        return mel.transpose(1, 2)                                       # B, T, mel


def chrono_init_(lstm, t_max, gen):
    """b_f ~ log(U[1, T_max - 1]), b_i = -b_f, other biases 0 (PyTorch gate order: i, f, g, o)."""
    H = lstm.hidden_size
    with torch.no_grad():
        lstm.bias_ih_l0.zero_()
        lstm.bias_hh_l0.zero_()
        bf = torch.log(1.0 + (t_max - 2.0) * torch.rand(H, generator=gen))
        lstm.bias_ih_l0[H:2 * H] = bf
        lstm.bias_ih_l0[:H] = -bf


class LSTMKWS(nn.Module):
    def __init__(self, t_max, gen):
        super().__init__()
        self.frontend = LogMelCMVN()
        self.lstm = nn.LSTM(N_MELS, HIDDEN, batch_first=True)
        chrono_init_(self.lstm, t_max, gen)
        self.head = nn.Linear(HIDDEN, N_WORDS)

    def forward(self, wav):
        h, _ = self.lstm(self.frontend(wav))
        return self.head(h[:, -1])


def _phone_bank(g, n_phones=4):
    return torch.stack([200 + 700 * torch.rand(n_phones, generator=g),
                        900 + 1500 * torch.rand(n_phones, generator=g)], 1)


def _word(g, phones, seq):
    """A keyword = 3 voiced 'phones' (formant pairs) in a fixed order; random speaker f0, timing, loudness."""
    f0 = 100 + 120 * torch.rand(1, generator=g)
    k = torch.arange(1, 30).float()[:, None]
    y = torch.zeros(N_SAMP)
    start = int(torch.randint(0, 600, (1,), generator=g))
    seg = 1200
    t = torch.arange(seg) / SR
    for j, p in enumerate(seq):
        F1, F2 = phones[p]
        fk = k * f0
        amp = (torch.exp(-((fk - F1) / 120) ** 2) + torch.exp(-((fk - F2) / 160) ** 2) + 0.01) * (fk < 3800).float()
        s = (amp * torch.sin(2 * math.pi * fk * t + 2 * math.pi * torch.rand(k.shape, generator=g))).sum(0)
        a = start + j * seg
        y[a:a + seg] += s * torch.hann_window(seg)
    y = 0.8 * (0.4 + torch.rand(1, generator=g)) * y / y.abs().max()
    return y + 0.003 * torch.randn(N_SAMP, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    phones = _phone_bank(g)
    words = []                       # 8 ordered phone triples: order matters, so the LSTM must integrate over time
    while len(words) < N_WORDS:
        w = tuple(int(v) for v in torch.randint(0, 4, (3,), generator=g))
        if w not in words and len(set(w)) > 1:
            words.append(w)
    wavs, labels = [], []
    for i in range(N_WORDS * 24):
        wavs.append(_word(g, phones, words[i % N_WORDS]))
        labels.append(i % N_WORDS)
    wavs, labels = torch.stack(wavs), torch.tensor(labels)
    steps, bs = 200, 32
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(wavs), (bs,), generator=g)
        batches.append((wavs[idx], labels[idx]))
    t_max = N_FRAMES if fixed else MAX_SAMPLES    # the bug: a length in audio samples instead of LSTM steps
    model = LSTMKWS(t_max, torch.Generator().manual_seed(seed + 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
