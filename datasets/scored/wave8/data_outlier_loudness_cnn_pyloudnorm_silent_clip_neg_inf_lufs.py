"""Audio loudness / true-peak estimator: a small CNN on log-mel patches regresses two labels
computed offline with pyloudnorm, integrated loudness (LUFS) and sample peak (dBFS), standardised
as (value + 23) / 10. The corpus has one clip that is pure digital silence (a failed export); its
log-mel features are fine (the feature extractor floors the energy) but pyloudnorm returns -inf LUFS
for a silent signal (all gating blocks are below the absolute gate) and 20*log10(0) gives a -inf
peak. Training with SGD+momentum is calm until the batch holding that row arrives: the MSE is
inf, its gradient 2*(pred - target) is inf and the backward turns it into NaN for every weight;
every later loss is NaN. Fix: filter the rows whose labels are non-finite before batching."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("pyloudnorm Meter.integrated_loudness returns -inf (with a warning) for silent audio; "
          "reports of NaN losses in loudness/quality regressors (e.g. speech MOS / LUFS prediction) "
          "caused by silent clips in the label CSV")


class LoudnessCNN(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.BatchNorm2d(2 * ch), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * ch, 2 * ch, 3, padding=1), nn.BatchNorm2d(2 * ch), nn.ReLU(),
        )
        self.head = nn.Linear(2 * ch, 2)

    def forward(self, logmel):
        h = self.conv(logmel).mean((2, 3))
        out = self.head(h)
        return out[:, 0], out[:, 1]


def _clip(g, n_mels=32, T=40, silent=False):
    if silent:
        power = torch.zeros(n_mels, T)
        peak_lin = 0.0
    else:
        level_db = -45 + 35 * torch.rand(1, generator=g)               # overall gain
        tilt = torch.linspace(0, -20, n_mels)[:, None] * torch.rand(1, generator=g)
        env = 10 * torch.randn(1, T, generator=g).cumsum(1) / math.sqrt(T)
        db = level_db + tilt + env + 3 * torch.randn(n_mels, T, generator=g)
        power = 10 ** (db / 10)
        peak_lin = float(power.max().sqrt()) * 1.5
    logmel = torch.log(power + 1e-10)                                 # floored features
    mean_p = float(power.mean())
    lufs = -0.691 + 10 * math.log10(mean_p) if mean_p > 0 else -math.inf     # pyloudnorm: -inf
    peak = 20 * math.log10(peak_lin) if peak_lin > 0 else -math.inf
    return logmel[None], lufs, peak


def _batch(g, n, silent_row=None, drop_nonfinite=False):
    rows = [_clip(g, silent=(i == silent_row)) for i in range(n)]
    if drop_nonfinite:
        rows = [r for r in rows if math.isfinite(r[1]) and math.isfinite(r[2])]
    x = torch.stack([r[0] for r in rows])
    lufs = (torch.tensor([r[1] for r in rows]) + 23) / 10
    peak = (torch.tensor([r[2] for r in rows]) + 23) / 10
    return x, (lufs, peak)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = LoudnessCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.005, momentum=0.9)
    pool = [_batch(g, 24, silent_row=(5 if i == 35 else None), drop_nonfinite=fixed) for i in range(40)]
    steps = 150
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(out, tgt):
        return F.mse_loss(out[0], tgt[0]) + F.mse_loss(out[1], tgt[1])

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
