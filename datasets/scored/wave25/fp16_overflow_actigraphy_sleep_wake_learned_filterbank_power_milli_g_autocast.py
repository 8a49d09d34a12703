"""Sleep/wake classification from wrist actigraphy: raw tri-axial accelerometer in milli-g
(the watch's native unit, 30 s epochs resampled to 256 samples), a learned band-pass filterbank
(strided Conv1d), band power (square), log compression, batch-normalised log band energies
and a small MLP. Trained with fp16 autocast to match the half-precision on-device runtime.

Mechanism: under fp16 autocast the filterbank convolution runs (and returns) in float16; its
outputs on milli-g input are a few hundred to a few thousand, still representable. The band
power is then computed as `y * y` on that float16 tensor, which stays float16: anything above
~256 squares past 65504 and becomes inf, log1p(inf) = inf, and the MLP turns it into inf/NaN
logits - the loss is non-finite from the first epochs that contain movement (gravity alone
already gives ~1000 mg on one axis). The log compression would have brought the scale back to
~10 if the power had been computed in float32.

ORIGIN: "power", the module computing the band power (the op that leaves the fp16 range).

Fix: compute the band power in float32 (`y.float() * y.float()` inside `power`) - "fp32 for
the op"; everything else, including fp16 autocast, unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "power"
SOURCE = ("squared / energy features computed in float16 under autocast overflowing 65504 "
          "(PyTorch AMP docs: ops that should run in float32; actigraphy in milli-g as in "
          "GENEActiv/Axivity exports, e.g. van Hees et al. sleep detection)")


class BandPower(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32

    def forward(self, y):
        if self.fp32:
            y = y.float()
        return y * y


class ActigraphySleepNet(nn.Module):
    def __init__(self, n_bands, hidden, fp32_power):
        super().__init__()
        self.filterbank = nn.Conv1d(3, n_bands, 32, stride=16)
        self.power = BandPower(fp32_power)
        self.norm = nn.BatchNorm1d(n_bands)
        self.mlp = nn.Sequential(nn.Linear(n_bands, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, x):
        p = self.power(self.filterbank(x)).mean(-1)
        return self.mlp(self.norm(torch.log1p(p)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_bands = [16, 24, 12][seed % 3]
    hidden = [32, 48, 64][seed % 3]
    lr = [2e-3, 3e-3, 2.5e-3][seed % 3]
    bs = [32, 24, 48][seed % 3]
    steps = 120
    T = 256
    model = ActigraphySleepNet(n_bands, hidden, fp32_power=fixed)
    t = torch.arange(T).float() / 10.0
    batches = []
    for _ in range(steps):
        wake = torch.rand(bs, generator=g) < 0.5
        grav = F.normalize(torch.randn(bs, 3, 1, generator=g), dim=1) * 1000.0  # mg
        f = 0.5 + 2.5 * torch.rand(bs, 3, 1, generator=g)
        move_amp = torch.where(wake, 300.0, 8.0)[:, None, None] * (0.5 + torch.rand(bs, 3, 1, generator=g))
        x = grav + move_amp * torch.sin(2 * 3.1416 * f * t) + 5.0 * torch.randn(bs, 3, T, generator=g)
        batches.append((x, wake.long()))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
