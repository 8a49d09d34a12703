"""CAN-bus anomaly detector (intrusion / ECU-fault detection): a dense autoencoder over a short
window of decoded powertrain and chassis CAN signals (engine speed, vehicle speed, accelerator
pedal, brake pressure, steering-wheel angle, yaw rate, gear, coolant temperature); windows whose
reconstruction error exceeds a threshold are flagged.  MSE reconstruction loss, SGD with
momentum.

Mechanism: the signals are fed exactly as the DBC decoder returns them, in physical units: rpm
(700-6500), km/h (0-180), % pedal, bar, steering degrees (+-450), deg/s, gear 1-8, degC (80-105).
The input and reconstruction-target scales differ by 3-4 orders of magnitude; the MSE is ~1e6
from step 0 and entirely dominated by the rpm channel; its gradient with respect to the first
layer carries a further factor of the raw rpm (~1e3), so the very first momentum-SGD steps are
enormous, the weights blow up and the loss overflows to inf/NaN within a few steps.

ORIGIN: ``encoder.0`` - the first Linear, which receives the raw, unscaled signals.

Fix: standardise every signal with the training-set mean/std (inputs and reconstruction
targets); same model, optimiser, lr, steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "encoder.0"
SOURCE = ("Known pattern: feeding DBC-decoded CAN signals in physical units to a neural anomaly "
          "detector without normalisation (cf. CAN intrusion-detection papers that min-max scale "
          "signals, e.g. CANet, Hanselmann et al. 2020)")


class CanAutoencoder(nn.Module):
    def __init__(self, n_in, width, code):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, width), nn.ReLU(), nn.Linear(width, code), nn.ReLU())
        self.decoder = nn.Sequential(nn.Linear(code, width), nn.ReLU(), nn.Linear(width, n_in))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def _window(bs, W, g):
    speed = torch.rand(bs, 1, generator=g) * 150 + 10 + torch.cumsum(torch.randn(bs, W, generator=g), 1)
    speed = speed.clamp(0, 180)
    gear = torch.clamp((speed / 25).floor() + 1, 1, 8)
    rpm = (speed / gear) * 105 + 700 + 30 * torch.randn(bs, W, generator=g)
    pedal = (torch.rand(bs, 1, generator=g) * 60 + 5 * torch.randn(bs, W, generator=g)).clamp(0, 100)
    brake = torch.relu(torch.randn(bs, W, generator=g) * 8 - 6)
    steer = torch.randn(bs, 1, generator=g) * 120 + 10 * torch.randn(bs, W, generator=g)
    yaw = steer / 15.0 * speed / 100 + torch.randn(bs, W, generator=g)
    cool = 90 + torch.randn(bs, 1, generator=g) * 5 + 0.2 * torch.randn(bs, W, generator=g)
    return torch.stack([rpm, speed, pedal, brake, steer, yaw, gear, cool], -1).reshape(bs, -1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    W = [4, 6, 5][seed % 3]
    width = [128, 96, 64][seed % 3]
    code = [16, 12, 8][seed % 3]
    lr = [0.03, 0.03, 0.04][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 150
    model = CanAutoencoder(8 * W, width, code)

    ref = _window(4096, W, torch.Generator().manual_seed(1000 + seed))
    mean, std = ref.mean(0), ref.std(0) + 1e-6
    batches = []
    for _ in range(steps):
        x = _window(bs, W, g)
        if fixed:
            x = (x - mean) / std
        batches.append((x, x.clone()))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
