"""A sensor-fusion network estimates a drone's vertical velocity from two modalities passed as a
tuple: a 32-sample window of z-axis accelerometer readings and a 32-sample window of barometric
pressure, fed as the pressure change over the window in units of 0.5 hPa (values of order +-1).
Training data come from many logged flights; one log (it lands in batch 60) was recorded while the
barometer driver returned its int16 error code 32767 for a stretch of samples, and the loader
treated the code as a pressure reading, so a third of that batch's rows carry baro features of
~6e4. The first layer that reads the barometer window (baro_enc.0) produces activations ~1e4-1e5
times larger than normal, the loss of that batch is ~1e9, the gradient is enormous, and SGD with
Nesterov momentum throws the weights so far that the next losses overflow and the run turns NaN.
The fix drops the corrupt rows from that batch (the standard "filter the glitched samples" step);
everything else is identical.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "baro_enc.0"
SOURCE = ("Known pattern: sensor drivers returning saturation / error codes (0x7FFF) that pass "
          "through standardisation (e.g. PX4 baro glitch / ArduPilot 'bad baro health' logs); "
          "one corrupt batch blowing up SGD training.")

W = 32
BAD_STEP = 60
SENTINEL = 32767.0


class FusionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.imu_enc = nn.Sequential(nn.Linear(W, 48), nn.ReLU())
        self.baro_enc = nn.Sequential(nn.Linear(W, 48), nn.ReLU())
        self.fuse = nn.Sequential(nn.Linear(96, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, acc, baro):
        return self.fuse(torch.cat([self.imu_enc(acc), self.baro_enc(baro)], 1)).squeeze(-1)


def _flights(g, n):
    dt = 0.1
    t = torch.arange(W).float() * dt
    # vertical velocity profile: v(t) = v0 + a0 t + small oscillation
    v0 = torch.randn(n, 1, generator=g) * 2
    a0 = torch.randn(n, 1, generator=g) * 1.5
    w = torch.rand(n, 1, generator=g) * 4 + 1
    ph = torch.rand(n, 1, generator=g) * 6.283
    osc = 0.5 * torch.sin(w * t + ph)
    v = v0 + a0 * t + osc
    acc = a0 + 0.5 * w * torch.cos(w * t + ph) + 0.3 * torch.randn(n, W, generator=g)
    alt = 100 + torch.cumsum(v * dt, 1) + 5 * torch.randn(n, 1, generator=g)
    p_hpa = 1000 - alt * 0.12 + 0.01 * torch.randn(n, W, generator=g) + 3 * torch.randn(n, 1, generator=g)
    acc_n = acc / 2.0
    return acc_n, p_hpa, v[:, -1]


def _baro_features(p_hpa):
    # pressure change over the window relative to its first sample, in units of 0.5 hPa
    return (p_hpa - p_hpa[:, :1]) / 0.5


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    steps = 150
    B = 48
    batches = []
    for s in range(steps):
        acc, p_hpa, v = _flights(g, B)
        rows = None
        if s == BAD_STEP:
            rows = torch.arange(0, B, 3)
            p_hpa[rows, 8:] = SENTINEL          # driver error code logged as a reading
        baro = _baro_features(p_hpa)
        if rows is not None:
            if fixed:
                good = torch.ones(B, dtype=torch.bool)
                good[rows] = False
                acc, baro, v = acc[good], baro[good], v[good]
        batches.append(((acc, baro), v))
    model = FusionNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)

    def loss_fn(pred, v):
        return ((pred - v) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
