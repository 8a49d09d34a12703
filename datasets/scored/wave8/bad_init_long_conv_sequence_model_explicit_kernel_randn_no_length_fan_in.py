"""A long-convolution sequence classifier in the style of SGConv / "simple long convolutions"
(Fu et al. 2023): tokens are embedded, then three residual blocks each apply a depthwise causal
convolution whose kernel is an explicit parameter as long as the sequence (128 taps per channel,
computed with FFT), a GELU and a channel-mixing Linear; mean pooling and a linear classifier
follow (SGD + momentum). The kernels are created with nn.Parameter(torch.randn(C, L)), i.e.
std 1 per tap. Each output of a depthwise conv sums up to L=128 taps, so its fan-in is L and the
correct scale is ~1/sqrt(L): with std 1 the first long convolution already outputs std ~8 from
unit-scale embeddings (~0.7 with the right scale), and the residual stream grows ~3x per block
(std 1 -> 3 -> 10 -> 30) from step 0. The SGD updates scale with those activations, the first
steps blow the weights up and the loss becomes NaN within 3-4 steps. The fix initialises the kernels with the fan-in scale
randn(C, L) / sqrt(L) (Kaiming/LeCun for fan_in = L); nothing else changes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "blocks.0.longconv"
SOURCE = ("Long-convolution models (SGConv, Hyena explicit-filter ablations, Fu et al. 2023 "
          "'Simple Hardware-Efficient Long Convolutions') need kernel init scaled/decayed with "
          "length; hand-written nn.Parameter(torch.randn(C, L)) kernels explode activations.")

V, C, L = 16, 32, 128


class LongConv(nn.Module):
    def __init__(self, channels, length, scaled):
        super().__init__()
        k = torch.randn(channels, length)
        if scaled:
            k = k / math.sqrt(length)
        self.kernel = nn.Parameter(k)
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):  # x: (B, T, C), causal FFT convolution along T
        T = x.shape[1]
        xf = torch.fft.rfft(x.transpose(1, 2), n=2 * T)
        kf = torch.fft.rfft(self.kernel[:, :T], n=2 * T)
        y = torch.fft.irfft(xf * kf, n=2 * T)[..., :T]
        return y.transpose(1, 2) + self.bias


class Block(nn.Module):
    def __init__(self, scaled):
        super().__init__()
        self.longconv = LongConv(C, L, scaled)
        self.mix = nn.Linear(C, C)

    def forward(self, x):
        return x + self.mix(F.gelu(self.longconv(x)))


class LongConvClassifier(nn.Module):
    def __init__(self, scaled):
        super().__init__()
        self.embed = nn.Embedding(V, C)
        self.blocks = nn.ModuleList([Block(scaled) for _ in range(3)])
        self.head = nn.Linear(C, 2)

    def forward(self, tokens):
        h = self.embed(tokens)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h.mean(1))


def make_batch(g, B):
    # label: does marker token 1 occur more often than marker token 2 in the sequence?
    x = torch.randint(3, V, (B, L), generator=g)
    y = torch.randint(0, 2, (B,), generator=g)
    for i in range(B):
        n_major = int(torch.randint(6, 12, (1,), generator=g))
        n_minor = int(torch.randint(1, 5, (1,), generator=g))
        pos = torch.randperm(L, generator=g)[: n_major + n_minor]
        major, minor = (1, 2) if y[i] == 1 else (2, 1)
        x[i, pos[:n_major]] = major
        x[i, pos[n_major:]] = minor
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = LongConvClassifier(scaled=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    steps = 120
    batches = [make_batch(g, 32) for _ in range(steps)]

    def loss_fn(out, y):
        return F.cross_entropy(out, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
