"""Seizure detector on 4-channel scalp EEG in 4 s windows (256 Hz, 1024 samples, scaled by the
recording's background standard deviation): a feature layer computes classic hand-crafted
seizure features per channel (line length, signal energy, and the power in the 3-8 Hz band via a
fixed FIR filter) and a small tanh MLP classifies the window. The feature layer aggregates with
.sum(-1) over the window instead of .mean(-1), so the features are 1024x larger than the O(1)
values the MLP was designed for (they range from ~40 to ~9000). The first Linear+tanh layer
therefore gets pre-activations with a median magnitude of ~600: essentially every hidden unit
sits at +-1 for every window, with the same sign pattern for seizure and background (all
features are positive and huge), tanh' underflows to 0, no gradient reaches the first layer and
the layers above see a constant vector. Only the output bias can learn, so the loss stays at the
class-prior entropy (~ln 2) with no NaN. The fixed run aggregates with the mean, which puts the
pre-activations back in tanh's responsive range."""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "classifier.1"
SOURCE = ("Esteller et al. 2001 line-length seizure feature; hand-crafted EEG features fed to a "
          "tanh MLP (CHB-MIT style detectors); sum vs mean aggregation saturating tanh units")

FS, N, CH = 256, 1024, 4


class SeizureFeatures(nn.Module):
    def __init__(self, aggregate):
        super().__init__()
        self.aggregate = aggregate
        t = torch.arange(-32, 33, dtype=torch.float32) / FS
        lo, hi = 3.0, 8.0
        h = (2 * hi * torch.sinc(2 * hi * t) - 2 * lo * torch.sinc(2 * lo * t)) / FS
        h = h * torch.hamming_window(65, periodic=False)
        self.register_buffer("band_fir", h.view(1, 1, -1).repeat(CH, 1, 1))

    def forward(self, x):                         # x: [B, CH, N]
        agg = (lambda v: v.sum(-1)) if self.aggregate == "sum" else (lambda v: v.mean(-1))
        line_len = agg((x[..., 1:] - x[..., :-1]).abs())
        energy = agg(x * x)
        band = nn.functional.conv1d(x, self.band_fir, padding=32, groups=CH)
        band_pow = agg(band * band)
        return torch.cat([line_len, energy, band_pow], dim=1)


def make_batch(g, n):
    y = torch.randint(0, 2, (n,), generator=g)
    t = torch.arange(N, dtype=torch.float32) / FS
    bg = torch.cumsum(torch.randn(n, CH, N, generator=g), -1) * 0.05
    bg = bg - bg.mean(-1, keepdim=True)
    alpha = 0.4 * torch.sin(2 * math.pi * 10 * t + 6.28 * torch.rand(n, CH, 1, generator=g))
    x = bg + alpha + 0.6 * torch.randn(n, CH, N, generator=g)
    # seizure: rhythmic 4-6 Hz spike-and-wave discharge on a subset of channels
    f = 4 + 2 * torch.rand(n, 1, 1, generator=g)
    ph = 6.28 * torch.rand(n, 1, 1, generator=g)
    sw = torch.sin(2 * math.pi * f * t + ph)
    sw = 1.2 * sw + 1.0 * torch.relu(sw) ** 8
    involve = (torch.rand(n, CH, 1, generator=g) < 0.7).float()
    x = x + y.view(n, 1, 1).float() * involve * sw
    x = (x - x.mean(-1, keepdim=True)) / 0.7      # scaled by the recording's background std
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = nn.Sequential()
    model.add_module("features", SeizureFeatures("mean" if fixed else "sum"))
    model.add_module("classifier", nn.Sequential(
        nn.Linear(3 * CH, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 2)))
    steps = 150
    batches = [make_batch(g, 32) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
