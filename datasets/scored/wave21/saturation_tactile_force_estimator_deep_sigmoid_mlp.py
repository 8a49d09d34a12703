"""Tactile-skin contact-force estimator: a deep fully connected net (6 hidden layers,
logistic-sigmoid activations, as in the original MATLAB-trained model that was ported)
maps a 4x4 taxel array + 3 temperature/drift channels to the 3-D contact force, trained
with Adam.

Mechanism: sigmoid outputs are all positive (mean ~0.5), so the pre-activations of each
next layer are biased and spread; the top hidden layers drift into the flat tails of the
logistic within a few steps (Glorot & Bengio 2010) while sigma'(x) <= 0.25 per layer
shrinks the gradient by >= 4^6 on its way down.  Adam rescales the tiny gradients, but
the saturated top layer's output is nearly constant across inputs, so only the output
layer learns, on nearly constant features, and the force targets are zero-mean: the loss plateaus.
ORIGIN: the last hidden Sigmoid (net.11), the layer that saturates first and gates the
gradient for everything below it.
Fix: replace the sigmoid activations by a non-saturating one (SiLU).
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.11"
SOURCE = "Glorot & Bengio 2010 (top hidden sigmoid layer saturation); tactile force-estimation MLPs ported from MATLAB patternnet/logsig"


def build(seed: int, fixed: bool = False) -> dict:
    width, lr, B = [(64, 1e-3, 32), (48, 2e-3, 24), (96, 1e-3, 16)][seed % 3]
    torch.manual_seed(seed)
    act = nn.SiLU if fixed else nn.Sigmoid
    layers, d = [], 19
    for _ in range(6):
        layers += [nn.Linear(d, width), act()]
        d = width
    layers.append(nn.Linear(d, 3))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    g = torch.Generator().manual_seed(15000 + seed)
    W = torch.randn(16, 3, generator=g) / 4.0
    steps = 120
    batches = []
    for _ in range(steps):
        taxel = torch.randn(B, 16, generator=g)
        extra = torch.randn(B, 3, generator=g)
        force = taxel @ W + 0.3 * torch.tanh(taxel[:, :3] * taxel[:, 3:6])
        batches.append((torch.cat([taxel, extra], -1), force))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
