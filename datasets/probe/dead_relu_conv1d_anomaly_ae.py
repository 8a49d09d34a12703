"""Conv1d autoencoder for time-series anomaly detection whose ReLU bottleneck dies.

Architecture: the Keras "Timeseries anomaly detection using an Autoencoder" model ported to
PyTorch, with its bottleneck narrowed: Conv1d(1->32, k7, stride 2) + ReLU + Dropout ->
Conv1d(32->3, k7, stride 2) + ReLU (the bottleneck code) -> ConvTranspose1d(3->32) + ReLU +
Dropout -> ConvTranspose1d(32->32) + ReLU -> ConvTranspose1d(32->1).  Trained with Adam and MSE
to reconstruct standardised 256-step windows, aligned to the cycle start, of a periodic sensor
signal (48- and 12-step cycles with jittered phase, random amplitude and slope, plus noise), whose
reconstruction error is later thresholded to flag anomalies.

Mechanism: the user raised Adam's learning rate to 0.06 ("to converge faster") on a model with a
narrow ReLU bottleneck.  The bottleneck conv reads ReLU outputs, which are all >= 0, so the
gradient on all 224 weights of a code channel has one sign, and Adam's first, sign-like steps
(each ~lr per weight) shift that channel's pre-activation by several units at once.  After the
loss spike of the first steps every code channel ends up negative on every window; a ReLU with
negative input passes zero gradient, so the channels never come back ("dying ReLU", CS231n: 'with
a learning rate set too high, as much as 40% of your network can be dead').  With all bottleneck
channels dead (steps 3-4 here) the decoder sees a constant zero code, its output is one flat curve
for every window and the MSE sits at the data variance for the rest of the run.

ORIGIN: `encoder.4`, the bottleneck ReLU whose units die first (`encoder.3` is the conv feeding
it; the decoder's ReLUs, fed a constant, die later or not at all).

fixed=True: the hidden activations are LeakyReLU(0.1), which keep a gradient for negative inputs
so pushed-down units recover; learning rate, data, widths and initialisation are unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "encoder.4"
SOURCE = ("Keras example 'Timeseries anomaly detection using an Autoencoder' (Conv1D/"
          "Conv1DTranspose, relu) trained with a raised Adam lr; CS231n notes on dying ReLUs")


def _act(fixed):
    return nn.LeakyReLU(0.1) if fixed else nn.ReLU()


class ConvAE(nn.Module):
    def __init__(self, code_ch, fixed, width=32, p_drop=0.2):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(1, width, 7, stride=2, padding=3), _act(fixed), nn.Dropout(p_drop),
            nn.Conv1d(width, code_ch, 7, stride=2, padding=3), _act(fixed),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose1d(code_ch, width, 7, stride=2, padding=3, output_padding=1),
            _act(fixed), nn.Dropout(p_drop),
            nn.ConvTranspose1d(width, width, 7, stride=2, padding=3, output_padding=1), _act(fixed),
            nn.ConvTranspose1d(width, 1, 7, padding=3),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def _make_batches(g, steps, bs, length):
    t = torch.arange(length, dtype=torch.float32)
    day_phase = 2 * math.pi * torch.rand((), generator=g)      # windows aligned to the cycle start
    batches = []
    for _ in range(steps):
        phase = day_phase + 0.4 * (torch.rand(bs, 1, generator=g) - 0.5)
        amp = 0.7 + 0.6 * torch.rand(bs, 1, generator=g)
        slope = 0.6 * (torch.rand(bs, 1, generator=g) - 0.5)
        x = (amp * torch.sin(2 * math.pi * t / 48.0 + phase)
             + 0.35 * torch.sin(2 * math.pi * t / 12.0 + 2 * phase)
             + slope * (t / length - 0.5) + 0.1 * torch.randn(bs, length, generator=g))
        x = x / 0.85                                     # training-set standardisation
        x = x.unsqueeze(1)
        batches.append((x, x))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    code_ch = 3
    lr = 0.06
    bs = 48
    steps = 90 + 10 * seed
    model = ConvAE(code_ch, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = _make_batches(g, steps, bs, 256)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
