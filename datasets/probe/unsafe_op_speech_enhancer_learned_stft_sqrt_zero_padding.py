"""Speech-enhancement mask estimator with a learnable STFT front-end whose hand-written
magnitude sqrt(re^2 + im^2) has an infinite derivative at exactly zero.

Mechanism. The analysis filterbank (`encoder`) is a pair of learnable real/imaginary
Conv1d kernels initialised to a Hann-windowed Fourier basis (the learnable-STFT front-end of
Conv-TasNet/asteroid-style enhancers). It returns the complex frames and their magnitude,
computed by hand as `sqrt(re**2 + im**2)`. The magnitude is log-compressed and fed to a
Conv1d + GRU mask estimator; a real-valued sigmoid mask is applied to both
(re, im) and a learnable transposed-conv synthesis filterbank resynthesises the waveform; the
loss is time-domain MSE against the clean speech.

Training uses fixed-length crops; utterances shorter than the crop are right-padded with
digital silence by the collate function after mixing. For the first steps every utterance is
long enough, so the run is calm. At a seed-dependent step a batch contains a short utterance:
every analysis frame that lies wholly in the padding has re = im = 0 exactly. The forward pass
is fine (sqrt(0) = 0, the loss is finite), but backward of sqrt at 0 is inf, multiplied by
d(re^2)/d(re) = 0 gives NaN; the NaN flows into the encoder's filterbank weights, the optimizer
writes NaN into them and the next step's loss is NaN.

ORIGIN = "encoder": the leaf module that owns both the learnable filterbank and the sqrt; the
NaN is born in its backward and its weights are the first values that go bad.

Fix: the usual epsilon inside the square root, sqrt(re^2 + im^2 + 1e-8) (what asteroid's
`mag()` does). Same data, same padding, same everything else.

Scale. Batches of 8/12/16 crops and Adam at lr 2e-3: the synthetic utterances have a slow
syllable envelope, so a batch of only 4 crops can be almost silent and its loss is then far
below the typical one; with larger batches the per-step loss reflects the task and the fixed
run's loss falls clearly (to roughly a third to a half of its early value) within the run.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "encoder"
SOURCE = ("Hand-written STFT magnitude sqrt(re^2+im^2) on zero-padded (digitally silent) audio: "
          "NaN gradients reported for learnable-filterbank enhancers/separators; asteroid-filterbanks "
          "mag() adds EPS inside the sqrt for this reason (torch.sqrt backward at 0 is inf, inf*0 = NaN).")


class LearnableSTFT(nn.Module):
    def __init__(self, n_fft, hop, eps):
        super().__init__()
        n_bins = n_fft // 2 + 1
        t = torch.arange(n_fft, dtype=torch.float32)
        win = 0.5 - 0.5 * torch.cos(2 * math.pi * t / n_fft)
        k = torch.arange(n_bins, dtype=torch.float32)[:, None]
        ang = 2 * math.pi * k * t[None, :] / n_fft
        self.w_re = nn.Parameter((win * torch.cos(ang)).unsqueeze(1) / math.sqrt(n_fft))
        self.w_im = nn.Parameter((-win * torch.sin(ang)).unsqueeze(1) / math.sqrt(n_fft))
        self.hop = hop
        self.eps = eps

    def forward(self, wav):                      # wav (B, L)
        x = wav.unsqueeze(1)
        re = F.conv1d(x, self.w_re, stride=self.hop)
        im = F.conv1d(x, self.w_im, stride=self.hop)
        power = re * re + im * im
        mag = torch.sqrt(power + self.eps) if self.eps > 0 else torch.sqrt(power)
        return re, im, mag


class Enhancer(nn.Module):
    def __init__(self, n_fft, hop, hidden, eps):
        super().__init__()
        n_bins = n_fft // 2 + 1
        self.encoder = LearnableSTFT(n_fft, hop, eps)
        self.in_conv = nn.Conv1d(n_bins, hidden, 3, padding=1)
        self.in_act = nn.PReLU()
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.mask_fc = nn.Linear(hidden, n_bins)
        self.mask_act = nn.Sigmoid()
        self.decoder = nn.ConvTranspose1d(n_bins * 2, 1, n_fft, stride=hop, bias=False)
        with torch.no_grad():   # initialise synthesis as (approximate) inverse of the analysis basis
            scale = hop / n_fft * 2.0
            self.decoder.weight.copy_(torch.cat([self.encoder.w_re, self.encoder.w_im], 0) * scale)

    def forward(self, wav):
        re, im, mag = self.encoder(wav)
        feats = torch.log1p(mag)
        h = self.in_act(self.in_conv(feats))
        h, _ = self.rnn(h.transpose(1, 2))
        mask = self.mask_act(self.mask_fc(h)).transpose(1, 2)
        out = self.decoder(torch.cat([re * mask, im * mask], 1)).squeeze(1)
        return out[:, : wav.shape[1]]


def _speech(g, n, sr=8000):
    """Crude voiced-speech stand-in: harmonic source with a drifting f0 and syllable envelope."""
    t = torch.arange(n) / sr
    f0 = 100 + 120 * torch.rand(1, generator=g)
    f0 = f0 * (1 + 0.1 * torch.sin(2 * math.pi * (0.5 + torch.rand(1, generator=g)) * t))
    phase = 2 * math.pi * torch.cumsum(f0 / sr * torch.ones(n), 0)
    sig = sum((0.6 / h) * torch.sin(h * phase + 6.28 * torch.rand(1, generator=g)) for h in range(1, 6))
    env = torch.relu(torch.sin(2 * math.pi * (3 + 2 * torch.rand(1, generator=g)) * t + 6.28 * torch.rand(1, generator=g)))
    return 0.4 * sig * env


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    n_fft = [64, 128, 64][seed % 3]
    hop = n_fft // 4
    hidden = [48, 64, 32][seed % 3]
    bs = [8, 12, 16][(seed // 2) % 3]
    crop = 1024 + 256 * (seed % 2)
    steps = 90 + 15 * (seed % 4)
    pad_step = 20 + 7 * (seed % 5)          # first batch holding a too-short utterance
    batches = []
    for s in range(steps):
        clean = torch.stack([_speech(g, crop) for _ in range(bs)])
        noisy = clean + 0.15 * torch.randn(bs, crop, generator=g)
        short = []
        if s == pad_step or (s > pad_step and torch.rand(1, generator=g).item() < 0.15):
            short = [int(torch.randint(0, bs, (1,), generator=g))]
        for i in short:                      # collate: right-pad a short utterance with digital silence
            n = int(crop * (0.4 + 0.3 * torch.rand(1, generator=g).item()))
            clean[i, n:] = 0.0
            noisy[i, n:] = 0.0
        batches.append((noisy, clean))
    model = Enhancer(n_fft, hop, hidden, eps=1e-8 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
