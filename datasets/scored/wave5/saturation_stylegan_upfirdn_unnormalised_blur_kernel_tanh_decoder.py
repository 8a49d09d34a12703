"""Conv autoencoder whose decoder upsamples with a StyleGAN2-style "upfirdn" step: zero-insertion
(stride-2 transposed conv) followed by a fixed separable binomial low-pass kernel [1,3,3,1]x[1,3,3,1].
The reference implementation divides that kernel by its sum and multiplies by the upsampling gain
(factor**2 = 4); here the kernel is used raw (sum 64), so every upsampling stage multiplies the signal
by 16. The tanh that follows the first upsampling (decoder.up1.act) and the tanh output both receive
pre-activations of magnitude ~10: they sit at +-1, their derivative is ~1e-8, and SGD cannot move
the reconstruction, which stays a binary +-1 pattern. The loss is finite throughout and simply does
not go down. Fix: normalise the blur kernel (kernel / kernel.sum() * factor**2), i.e. smaller
pre-activations into the tanh units."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "decoder.up1.act"
SOURCE = ("StyleGAN2 upfirdn2d / BlurPool (Zhang 2019) anti-aliased resampling: the FIR kernel must be "
          "normalised to unit DC gain times up**2; re-implementations that forget the normalisation "
          "(reported in several StyleGAN2 / anti-aliased-CNN port issues) blow up activations into tanh")


class BlurUp(nn.Module):
    def __init__(self, channels, normalise):
        super().__init__()
        k1 = torch.tensor([1.0, 3.0, 3.0, 1.0])
        k = torch.outer(k1, k1)
        if normalise:
            k = k / k.sum() * 4.0          # unit DC gain times up**2
        self.channels = channels
        self.register_buffer("kernel", k.expand(channels, 1, 4, 4).clone())

    def forward(self, x):
        return F.conv_transpose2d(x, self.kernel, stride=2, padding=1, groups=self.channels)


class UpStage(nn.Module):
    def __init__(self, cin, cout, normalise):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.blur = BlurUp(cout, normalise)
        self.act = nn.Tanh()

    def forward(self, x):
        return self.act(self.blur(self.conv(x)))


class AE(nn.Module):
    def __init__(self, normalise):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.GroupNorm(4, 16),
        )
        self.decoder = nn.Module()
        self.decoder.up1 = UpStage(16, 16, normalise)
        self.decoder.up2 = UpStage(16, 1, normalise)

    def forward(self, x):
        h = self.encoder(x)
        return self.decoder.up2(self.decoder.up1(h))


def _textures(g, n, size=16):
    """Smooth zero-mean textures (a few low-frequency plane waves), values roughly in [-0.6, 0.6]."""
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    imgs = torch.zeros(n, 1, size, size)
    for _ in range(3):
        fx = torch.randint(-2, 3, (n, 1, 1), generator=g).float()
        fy = torch.randint(-2, 3, (n, 1, 1), generator=g).float()
        ph = torch.rand(n, 1, 1, generator=g) * 2 * math.pi
        imgs[:, 0] += torch.cos(2 * math.pi * (fx * xx + fy * yy) + ph)
    return 0.2 * imgs


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = AE(normalise=fixed)
    steps, bs = 120, 16
    data = _textures(g, 256)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, data.shape[0], (bs,), generator=g)
        batches.append((data[idx], data[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
