"""ADS-B vertical-rate predictor (MLP over the last Mode-C/S altitude reports of a track).

Mechanism: a surveillance-data-processing team predicts the next 5-s vertical rate of a
track from its last 8 barometric-altitude differences, ground speed and track-angle rate,
all standardised with fixed constants (1000 ft/min, 100 kt, ...). Some transponders send the
"altitude not available" code, which one decoder version turns into -1000 ft instead of
dropping the report; for a cruising aircraft the differences then show a ~36 000 ft drop in
5 s. One mini-batch early in training (the step varies with the recording day) contains such
tracks, so a few inputs and targets are ~400 standard deviations out. With plain MSE the
squared error of those rows is ~1e5 times the clean loss; SGD + momentum takes one enormous
step, the next forward pass produces predictions of ~1e4-1e8, the loss and gradients grow
without bound within a few steps and reach inf/NaN.

ORIGIN: ``net.0`` - the first Linear is the first module the corrupt rows reach and the layer
whose weights/biases the huge gradient throws off first; the cause itself is in the data.

Fix: drop reports whose altitude difference exceeds the physical envelope (|dh| > 6000 ft per
5 s) before batching; everything else is unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("Known ADS-B data-quality issue: invalid/unavailable barometric altitude decoded as a "
          "numeric value (e.g. -1000 ft) instead of being flagged, producing impossible "
          "vertical rates in OpenSky-style track data; one extreme batch wrecking an SGD-trained "
          "MLP is the classic outlier-gradient failure.")

FT_PER_5S_SCALE = 1000.0 / 12.0  # 1000 ft/min expressed per 5-s interval


def _tracks(g, n, cruise_alt):
    vs = torch.randn(n, 1, generator=g) * 1500  # ft/min, climb / descent / level
    accel = torch.randn(n, 1, generator=g) * 150
    k = torch.arange(10).float()
    rate = vs + accel * k  # ft/min
    dh = rate / 12.0 + torch.randn(n, 10, generator=g) * 8  # ft per 5 s
    alt = cruise_alt + torch.cumsum(dh, 1)
    gs = 250 + 200 * torch.rand(n, 1, generator=g)
    trk = torch.randn(n, 1, generator=g) * 0.5
    return alt, gs, trk, rate[:, -1:] + accel


def _features(alt, gs, trk):
    dh = alt[:, 1:9] - alt[:, 0:8]
    return torch.cat([dh / FT_PER_5S_SCALE, (gs - 350) / 100, trk], 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    width = [64, 96, 128][seed % 3]
    depth = [3, 4, 3][seed % 3]
    lr = [0.02, 0.015, 0.01][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 150
    bad_step = [6, 9, 12][seed % 3]

    layers, d = [], 10
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))

    batches = []
    for i in range(steps):
        alt0 = 15000 + 20000 * torch.rand(bs, 1, generator=g)
        alt, gs, trk, nxt = _tracks(g, bs, alt0)
        if i == bad_step:
            rows = torch.randperm(bs, generator=g)[: max(2, bs // 8)]
            alt[rows, 6:] = -1000.0  # "altitude not available" decoded as a number
            nxt[rows] = (-1000.0 - alt[rows, 5:6]) * 12.0
            if fixed:
                dh = alt[:, 1:] - alt[:, :-1]
                keep = (dh.abs() <= 6000).all(1)
                alt, gs, trk, nxt = alt[keep], gs[keep], trk[keep], nxt[keep]
        x = _features(alt, gs, trk)
        y = nxt / 1000.0
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
