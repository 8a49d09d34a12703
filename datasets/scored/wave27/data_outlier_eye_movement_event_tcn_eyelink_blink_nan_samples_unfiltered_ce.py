"""Eye-movement event detection: a dilated temporal convolutional network labels every sample of a
500 Hz gaze recording (x, y in degrees of visual angle, scaled by 1/10) as fixation, saccade or smooth
pursuit, trained with per-sample cross-entropy and Adam.

Mechanism: the EyeLink sample export writes missing data during blinks as NaN (the tracker loses
the pupil for ~80-150 ms). The loader only drops trials flagged by the experimenter, so one batch
(its position in the stream depends on the seed) contains a trial with an unflagged blink: a run
of NaN gaze samples. The convolution propagates NaN into every logit of the receptive field, the
cross-entropy is NaN at that step and Adam writes NaN into the weights: the loss is non-finite
from then on. All other batches are clean.

ORIGIN: "tcn.0", the first Conv1d: it is the first module the corrupt batch hits and the first
whose output turns non-finite.

Fix: standard blink handling in the loader: samples where the tracker reports NaN are filled by
linear interpolation between the last valid sample before and the first after the blink (what
pupil/gaze preprocessing pipelines do); the model, other batches, lr and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "tcn.0"
SOURCE = ("EyeLink/SR Research ASC/EDF exports and pandas/numpy loaders represent blink samples "
          "as NaN (e.g. PyGaze, pupil-preprocessing guides); 'loss is nan' reports traced to "
          "unfiltered NaN rows in one file; TCN event detection as in Startsev et al. 2019 "
          "(1D CNN-BLSTM) / Zemblys et al. 2018 (gazeNet)")


def _trial(n, T, g):
    """Synthetic gaze: fixations with drift, saccades (fast ramps) and pursuit segments."""
    xs = torch.zeros(n, 2, T)
    lab = torch.zeros(n, T, dtype=torch.long)
    for i in range(n):
        pos = torch.randn(2, generator=g) * 5
        t = 0
        while t < T:
            kind = int(torch.randint(0, 3, (1,), generator=g))
            if kind == 1:  # saccade: 15-30 ms at 300-500 deg/s
                L = int(torch.randint(8, 15, (1,), generator=g))
                step = torch.randn(2, generator=g)
                step = step / step.norm() * float(torch.empty(1).uniform_(5, 12, generator=g)) / L
            elif kind == 2:  # pursuit: 10-25 deg/s
                L = int(torch.randint(40, 100, (1,), generator=g))
                step = torch.randn(2, generator=g)
                step = step / step.norm() * float(torch.empty(1).uniform_(10, 25, generator=g)) / 500
            else:  # fixation with small drift
                L = int(torch.randint(40, 120, (1,), generator=g))
                step = torch.zeros(2)
            L = min(L, T - t)
            seg = pos[:, None] + step[:, None] * torch.arange(1, L + 1)[None]
            xs[i, :, t:t + L] = seg
            lab[i, t:t + L] = kind
            pos = seg[:, -1]
            t += L
    xs = xs + 0.01 * torch.randn(xs.shape, generator=g)  # tracker noise (deg)
    return xs / 10.0, lab


def _interp_nan(x):
    x = x.clone()
    for i in range(x.shape[0]):
        for c in range(x.shape[1]):
            v = x[i, c]
            bad = torch.isnan(v)
            if bad.any():
                idx = torch.arange(v.numel(), dtype=torch.float32)
                good = ~bad
                gi, gv = idx[good], v[good]
                j = torch.searchsorted(gi, idx[bad]).clamp(1, gi.numel() - 1)
                w = (idx[bad] - gi[j - 1]) / (gi[j] - gi[j - 1])
                v[bad] = gv[j - 1] + w * (gv[j] - gv[j - 1])
    return x


class EventTCN(nn.Module):
    def __init__(self, ch, levels):
        super().__init__()
        layers, d = [], 2
        for l in range(levels):
            layers += [nn.Conv1d(d, ch, 5, padding=2 * 2 ** l, dilation=2 ** l), nn.ReLU()]
            d = ch
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Conv1d(ch, 3, 1)

    def forward(self, x):
        # velocity-like features are learnt by the first dilated convs from positions
        return self.head(self.tcn(x - x[:, :, :1]))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [32, 48, 64][seed % 3]
    levels = [3, 4, 3][seed % 3]
    batch = [16, 24, 32][(seed + 2) % 3]
    lr = [4e-3, 5e-3, 3e-3][seed % 3]
    steps = 160
    T = 256
    bad_step = [23, 61, 87][seed % 3]

    torch.manual_seed(seed)
    model = EventTCN(ch, levels)
    batches = []
    for s in range(steps):
        x, y = _trial(batch, T, g)
        if s == bad_step:
            k = int(torch.randint(0, batch, (1,), generator=g))
            start = int(torch.randint(20, T - 90, (1,), generator=g))
            x[k, :, start:start + 60] = float("nan")  # blink: pupil lost, EyeLink writes NaN
            if fixed:
                x = _interp_nan(x)
        batches.append((x, y))

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps}
