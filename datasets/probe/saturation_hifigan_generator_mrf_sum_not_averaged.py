"""HiFi-GAN-style vocoder generator whose multi-receptive-field fusion (MRF) sums its residual
blocks without dividing by their number, so the signal grows K-fold per upsampling stage and
the output tanh saturates.

Mechanism. The generator is conv_pre -> [LeakyReLU -> ConvTranspose1d upsample -> MRF] x S ->
LeakyReLU -> conv_post -> tanh (the official HiFi-GAN layout; ResBlock convs initialised
N(0, 0.01) as in the official code, the up-sampling path Kaiming-initialised). In the official
code the MRF returns `xs / self.num_kernels`; here the division was dropped ("sum is what MRF
means"). Each residual block is `x + small(x)`, so the MRF output is ~K x its input and after S
stages the pre-tanh signal is ~K^S (27x .. 81x) larger than intended. From step 0 nearly every
output sample of the final tanh sits at exactly +-1.0 in float32, whose derivative 1 - y^2 is 0:
the multi-resolution log-spectral L1 loss sends back no gradient except through the few
samples near the zero crossings, so the loss sits where it started (a clipped square wave),
while the fixed generator learns the spectral envelope.

ORIGIN = "act_post": the tanh unit that saturates and where the gradient dies (the growth
upstream is harmless until it reaches this bounded unit).

Fix: restore `xs / num_kernels` in the MRF (smaller pre-activations); nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "act_post"
SOURCE = ("HiFi-GAN (Kong et al. 2020) generator: MRF output is the sum of the ResBlocks divided by "
          "num_kernels; dropping the division in re-implementations inflates the pre-tanh scale "
          "K^stages-fold and saturates the output tanh (clipped, square-wave audio, flat loss).")

LRELU = 0.1


def _init_small(m):
    if isinstance(m, nn.Conv1d):
        nn.init.normal_(m.weight, 0.0, 0.01)     # official HiFi-GAN init_weights for the ResBlocks
        nn.init.zeros_(m.bias)


def _init_kaiming(m):
    nn.init.kaiming_normal_(m.weight, a=LRELU, nonlinearity="leaky_relu")
    nn.init.zeros_(m.bias)


class ResBlock(nn.Module):
    def __init__(self, ch, k, dilations=(1, 3)):
        super().__init__()
        self.convs1 = nn.ModuleList([nn.Conv1d(ch, ch, k, dilation=d, padding=d * (k - 1) // 2) for d in dilations])
        self.convs2 = nn.ModuleList([nn.Conv1d(ch, ch, k, padding=(k - 1) // 2) for _ in dilations])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = c2(F.leaky_relu(c1(F.leaky_relu(x, LRELU)), LRELU))
            x = x + xt
        return x


class MRF(nn.Module):
    def __init__(self, ch, kernels, average):
        super().__init__()
        self.blocks = nn.ModuleList([ResBlock(ch, k) for k in kernels])
        self.average = average

    def forward(self, x):
        xs = sum(b(x) for b in self.blocks)
        return xs / len(self.blocks) if self.average else xs


class Generator(nn.Module):
    def __init__(self, n_mels, ch, rates, kernels, average):
        super().__init__()
        self.conv_pre = nn.Conv1d(n_mels, ch, 7, padding=3)
        self.ups = nn.ModuleList()
        self.mrfs = nn.ModuleList()
        c = ch
        for r in rates:
            self.ups.append(nn.ConvTranspose1d(c, c // 2, 2 * r, stride=r, padding=r // 2))
            c //= 2
            self.mrfs.append(MRF(c, kernels, average))
        self.conv_post = nn.Conv1d(c, 1, 7, padding=3)
        self.act_post = nn.Tanh()
        self.mrfs.apply(_init_small)
        for m in [self.conv_pre, self.conv_post, *self.ups]:
            _init_kaiming(m)

    def forward(self, mel):
        x = self.conv_pre(mel)
        for up, mrf in zip(self.ups, self.mrfs):
            x = mrf(up(F.leaky_relu(x, LRELU)))
        x = self.conv_post(F.leaky_relu(x))
        return self.act_post(x).squeeze(1)


def _logspec(wav, n_fft, hop):
    win = torch.hann_window(n_fft)
    spec = torch.stft(wav, n_fft, hop, window=win, return_complex=True)
    power = spec.real ** 2 + spec.imag ** 2          # no sqrt: safe at silence
    return torch.log(power + 1e-5)


class MultiResSpecL1(nn.Module):
    def __init__(self, ffts):
        super().__init__()
        self.ffts = ffts

    def forward(self, pred, target):
        return sum(F.l1_loss(_logspec(pred, n, n // 4), _logspec(target, n, n // 4)) for n in self.ffts) / len(self.ffts)


def _melbank(n_fft, n_mels, sr):
    n_bins = n_fft // 2 + 1
    def hz2mel(f): return 2595 * math.log10(1 + f / 700)
    mels = torch.linspace(hz2mel(40), hz2mel(sr / 2), n_mels + 2)
    hz = 700 * (10 ** (mels / 2595) - 1)
    bins = torch.linspace(0, sr / 2, n_bins)
    fb = torch.zeros(n_mels, n_bins)
    for m in range(n_mels):
        lo, c, hi = hz[m], hz[m + 1], hz[m + 2]
        fb[m] = torch.clamp(torch.minimum((bins - lo) / (c - lo), (hi - bins) / (hi - c)), min=0)
    return fb


def _wave(g, n, sr):
    t = torch.arange(n) / sr
    f0 = 110 + 220 * torch.rand(1, generator=g)
    vib = 1 + 0.02 * torch.sin(2 * math.pi * 5 * t)
    phase = 2 * math.pi * torch.cumsum(f0 * vib / sr, 0)
    amps = torch.rand(6, generator=g) / torch.arange(1, 7)
    sig = sum(amps[h] * torch.sin((h + 1) * phase + 6.28 * torch.rand(1, generator=g)) for h in range(6))
    env = 0.3 + 0.7 * torch.sigmoid(8 * torch.sin(2 * math.pi * (2 + 3 * torch.rand(1, generator=g)) * t))
    sig = sig * env + 0.01 * torch.randn(n, generator=g)
    return 0.8 * sig / sig.abs().max()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    sr = 8000
    rates = [[4, 4, 2], [2, 2, 4, 2], [4, 2, 2, 2], [4, 4, 2]][seed % 4]
    kernels = [(3, 7, 11), (3, 5, 7), (3, 7, 11), (3, 5, 7, 9)][seed % 4]
    ch = [64, 48, 64, 32][seed % 4]
    n_mels = 40 if seed % 2 else 32
    hop = math.prod(rates)
    frames = 20 + 4 * (seed % 3)
    n = frames * hop
    bs = 3 + seed % 3
    steps = 120 + 20 * (seed % 3)
    fb = _melbank(4 * hop, n_mels, sr)
    batches = []
    for _ in range(steps):
        wav = torch.stack([_wave(g, n, sr) for _ in range(bs)])
        spec = torch.stft(wav, 4 * hop, hop, window=torch.hann_window(4 * hop), return_complex=True, center=True)
        mel = torch.log(fb @ (spec.abs() ** 2) + 1e-5)[..., :frames]
        mel = (mel + 5.0) / 4.0                       # fixed dataset-level normalisation
        batches.append((mel, wav))
    model = Generator(n_mels, ch, rates, kernels, average=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, betas=(0.8, 0.99))
    return dict(model=model, optimizer=opt, loss_fn=MultiResSpecL1([64, 128, 256]), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
