"""Beamline surrogate for a Kirkpatrick-Baez (KB) focusing mirror pair: a GELU MLP maps the
standardised bender settings and mirror pitch/height readbacks to the standardised horizontal
and vertical focal-spot sizes and centroid offsets measured on a YAG screen (MSE, SGD with
momentum 0.9). Training at lr=0.1 "looked slow" on the first scan, so the operator raised the
step size to 2-3 (BatchNorm'd classification nets tolerate such values; a BN-free regression
MLP does not).

Mechanism: the loss surface of the quadratic spot-size response has curvature far above
2/lr for this step size, so each SGD+momentum step overshoots the minimum by more than it
corrects: the parameter updates are a large fraction of the weights themselves, the error
grows geometrically, and within a few dozen steps the loss overflows to inf/NaN.

ORIGIN: None - an optimiser setting, not one module, is at fault (every layer's updates are
too large at once).
Fix: lr=0.01 (same momentum, model, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Goodfellow et al. Deep Learning 8.1/4.3 (step size vs curvature, divergence when "
          "lr > 2/lambda_max); ML surrogate models for beamline/KB-mirror tuning "
          "(e.g. Rebuffi et al. 2023, J. Synchrotron Rad.)")


def _shots(g, bs, n_in):
    x = torch.randn(bs, n_in, generator=g)
    # spot size ~ quadratic around the best focus (bender curvature vs source distance)
    fh = (x[:, 0] - 0.3 * x[:, 2]) ** 2 * 0.5 + 0.2 * x[:, 4]
    fv = (x[:, 1] + 0.2 * x[:, 3]) ** 2 * 0.5 - 0.1 * x[:, 5]
    ch = 0.8 * x[:, 2] + 0.3 * x[:, 0] * x[:, 1]
    cv = 0.8 * x[:, 3] - 0.2 * x[:, 5]
    y = torch.stack([fh, fv, ch, cv], 1)
    y = y + 0.05 * torch.randn(y.shape, generator=g)
    return x, (y - y.mean(0)) / 0.8


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(800 + seed)
    n_in = 6
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = 0.01 if fixed else [2.0, 3.0, 2.5][seed % 3]
    steps = 150
    layers, d = [], n_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.GELU()]
        d = width
    layers.append(nn.Linear(d, 4))
    model = nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_shots(g, bs, n_in) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
