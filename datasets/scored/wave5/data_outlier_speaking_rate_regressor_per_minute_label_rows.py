"""A small 1D-CNN with attention pooling regresses the speaking rate (syllables per second)
of short utterances from frame features (log-energy plus noisy spectral channels); the
training set (256 utterances) is cycled for 20 epochs. Four of the 256 labels came from a
second annotation tool that exports syllables per *minute*, so those rows say ~240 instead of
~4. Every epoch the two batches that hold them produce squared errors ~5e4 per corrupt row, the
MSE of those batches is hundreds of times the clean loss, and the model is dragged towards
over-predicting everything to hedge for them. Nothing becomes NaN, but the batch loss never
settles: averaged over the last steps it is higher than the very first clean batches. The fix
only drops the four corrupt label rows (an annotation sanity filter: rate > 20 syll/s).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("mixed-unit annotations (per-minute vs per-second rates) from several labelling tools; "
          "a few corrupt label rows dominating an MSE regression")

NCH, NFR, FPS = 8, 100, 50     # channels, frames (2 s at 50 fps)


class RateRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(NCH, 32, 5, padding=2), nn.ReLU(),
            nn.Conv1d(32, 32, 5, padding=4, dilation=2), nn.ReLU())
        self.att = nn.Linear(32, 1)
        self.out = nn.Linear(32, 1)

    def forward(self, x):                                   # (B, NCH, NFR)
        h = self.conv(x).transpose(1, 2)                    # (B, NFR, 32)
        w = torch.softmax(self.att(h), dim=1)
        return self.out((w * h).sum(1)).squeeze(-1)


def _utterances(g, n):
    rate = 2.0 + 4.0 * torch.rand(n, generator=g)            # syllables / second
    t = torch.arange(NFR).float() / FPS
    phase = 2 * math.pi * torch.rand(n, 1, generator=g)
    energy = torch.relu(torch.sin(2 * math.pi * rate[:, None] * t[None] + phase)) ** 2
    x = 0.3 * torch.randn(n, NCH, NFR, generator=g)
    x[:, 0] += 2.0 * energy
    x[:, 1:4] += energy[:, None, :] * torch.rand(n, 3, 1, generator=g)
    return x, rate


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RateRegressor()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    x, y = _utterances(g, 256)
    corrupt = torch.randperm(256, generator=g)[:4]
    y[corrupt] = y[corrupt] * 60.0                          # syllables per minute rows
    if fixed:
        keep = y <= 20.0                                    # annotation sanity filter
        x, y = x[keep], y[keep]
    n = len(y)
    bs, steps = 32, 160
    epoch_batches = [(x[i:i + bs], y[i:i + bs]) for i in range(0, n, bs)]
    batches = [epoch_batches[s % len(epoch_batches)] for s in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lambda p, t: F.mse_loss(p, t),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
