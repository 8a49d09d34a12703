"""Wearable/Holter ECG heart-rate regressor hit by one batch of records read as raw ADC counts.

Mechanism: a plain Kaiming-initialised 1D CNN (no normalisation layers) regresses the mean heart rate (standardised
bpm) of 4-s single-lead ECG strips in millivolts (sinus and AF rhythms), trained with SGD +
momentum and MSE. One batch mid-run comes from a source whose records were read with ``physical=False``
(wfdb): digital ADC counts (gain 200/mV, baseline 1024), i.e. values around 1000 instead of
+-1. That batch gives predictions in the hundreds, a loss ~1e2-1e5x the usual and weight
gradients ~1e3-1e4x their normal size. One SGD + momentum step (and the momentum it leaves
behind) moves the conv weights far outside their range: activations explode and the loss
goes non-finite, or the ReLU stack is knocked into a dead/constant state and the loss
flat-lines at the target variance -- the run never recovers.

ORIGIN: ``features.0`` -- the first convolution, which receives the unconverted record batch.

Fix: filter the batch -- convert it to millivolts ((adc - baseline) / gain) like the rest of
the data before it reaches the model; nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "features.0"
SOURCE = ("PhysioNet/Holter pipelines mixing wfdb.rdsamp(physical=False) digital records with "
          "physical-unit records; 'loss explodes to nan in the middle of the epoch' reports on "
          "ECG CNNs traced to one batch of unconverted ADC values.")


class HRNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(1, c, 7, stride=2, padding=3), nn.ReLU(),
            nn.Conv1d(c, c, 7, stride=2, padding=3), nn.ReLU(),
            nn.Conv1d(c, 2 * c, 7, stride=2, padding=3), nn.ReLU(),
            nn.Conv1d(2 * c, 2 * c, 7, stride=2, padding=3), nn.ReLU())
        self.head = nn.Linear(4 * c, 1)
        for m in self.features:
            if isinstance(m, nn.Conv1d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        h = self.features(x)
        return self.head(torch.cat([h.mean(-1), h.std(-1)], 1)).squeeze(1)


def synth_ecg(g, n, fs=250, sec=4):
    t = torch.arange(fs * sec).float() / fs
    out, hr_out = torch.zeros(n, 1, fs * sec), torch.zeros(n)
    for b in range(n):
        af = bool(torch.rand(1, generator=g) < 0.3)
        bpm = 50 + 70 * float(torch.rand(1, generator=g))
        beat, x, n_beats = float(torch.rand(1, generator=g)) * 0.5, torch.zeros(fs * sec), 0
        while beat < sec:
            if not af:
                x += 0.15 * torch.exp(-((t - beat + 0.16) / 0.025) ** 2)          # P wave
            x += 1.0 * torch.exp(-((t - beat) / 0.012) ** 2)                      # QRS
            x += 0.3 * torch.exp(-((t - beat - 0.25) / 0.05) ** 2)                # T wave
            jitter = 0.25 if af else 0.03
            beat += max(60.0 / bpm * (1 + jitter * float(torch.randn(1, generator=g))), 0.3)
        if af:
            x += 0.05 * torch.sin(2 * math.pi * 6 * t + float(torch.rand(1, generator=g)) * 6)  # f-waves
        out[b, 0] = x + 0.05 * torch.randn(fs * sec, generator=g)
        hr_out[b] = (bpm - 85.0) / 20.0
    return out, hr_out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 12, 20][seed % 3]
    lr = [0.01, 0.008, 0.012][seed % 3]
    bsz = [16, 24, 16][seed % 3]
    bad_step = [70, 95, 80][seed % 3]
    steps = 150
    batches = []
    for i in range(steps):
        x, y = synth_ecg(g, bsz)
        if i == bad_step and not fixed:
            x = torch.round(x * 200.0 + 1024.0)  # digital ADC counts, never converted
        batches.append((x, y))
    model = HRNet(c)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
