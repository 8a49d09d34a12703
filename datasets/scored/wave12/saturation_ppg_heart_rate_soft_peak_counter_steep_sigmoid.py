"""Wrist-PPG heart-rate estimator trained end-to-end through a differentiable beat counter: a small
Conv1d network turns the 8 s PPG window into a per-sample 'pulse score', a soft threshold
sigmoid(k * (score - 0.5)) turns it into a pulse indicator, and the number of rising edges of
the indicator (sum of relu of its first difference) is the beat count that is regressed onto the
reference count from the chest ECG. To make the soft threshold 'almost hard' the sharpness was
set to k = 50. At initialisation the scores lie within ~0.3 of zero, so every pre-activation of
the sigmoid is between about -12 and -35 and the indicator is flat at 1e-5..1e-15: the count is
0 for every window, and the gradient that has to pass through the sigmoid is scaled by
k*sigma'(.) <= 3e-4 (usually far less). SGD cannot move the score network at all and the loss
sits at its initial value (mean squared beat count) for the whole run, with no NaN. The fixed
run uses k = 1, whose pre-activations stay in the sigmoid's responsive range."""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "soft_threshold"
SOURCE = ("Differentiable peak/event counting with a steep sigmoid surrogate of a hard threshold "
          "(cf. soft-counting in crowd/event counting, straight-through vs. temperature "
          "annealing discussions); PPG heart-rate estimation (IEEE SPC 2015 / PPG-DaLiA)")

FS, SECS = 25, 8
N = FS * SECS


class SoftThreshold(nn.Module):
    def __init__(self, k, thr=0.5):
        super().__init__()
        self.k, self.thr = k, thr

    def forward(self, s):
        return torch.sigmoid(self.k * (s - self.thr))


class BeatCounter(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.score = nn.Sequential(nn.Conv1d(1, 8, 9, padding=4), nn.ReLU(),
                                   nn.Conv1d(8, 8, 9, padding=4), nn.ReLU(),
                                   nn.Conv1d(8, 1, 1))
        self.soft_threshold = SoftThreshold(k)

    def forward(self, ppg):
        s = self.score(ppg.unsqueeze(1)).squeeze(1)
        ind = self.soft_threshold(s)
        return torch.relu(ind[:, 1:] - ind[:, :-1]).sum(1)      # soft count of rising edges


def make_batch(g, n):
    t = torch.arange(N, dtype=torch.float32) / FS
    hr = 50 + 100 * torch.rand(n, 1, generator=g)               # bpm
    f = hr / 60.0
    ph = 2 * math.pi * torch.rand(n, 1, generator=g)
    phase = 2 * math.pi * f * t + ph
    ppg = torch.sin(phase) + 0.35 * torch.sin(2 * phase + 0.8)   # systolic peak + dicrotic notch
    ppg = ppg + 0.3 * torch.sin(2 * math.pi * 0.2 * t + 6.28 * torch.rand(n, 1, generator=g))
    ppg = ppg + 0.1 * torch.randn(n, N, generator=g)
    beats = (phase[:, -1:] - phase[:, :1]) / (2 * math.pi)     # beats in the window
    return ppg, beats.squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = BeatCounter(k=1.0 if fixed else 50.0)
    steps = 200
    batches = [make_batch(g, 32) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def loss_fn(count, beats):
        return (((count - beats) / 10.0) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
