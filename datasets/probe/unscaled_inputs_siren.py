"""SIREN fitting an 8-bit image from raw pixel coordinates and raw 0..255 intensities.

Mechanism
---------
A SIREN (sin activations, omega_0 = 30, Sitzmann et al. initialisation) is fitted
to a 32x32 image, coordinates -> intensity.  The SIREN initialisation is derived
for inputs in [-1, 1] and outputs of order 1.  Here the coordinates are the raw
pixel indices 0..31 and the targets the raw uint8 values 0..255.  The first
sine layer's phases are 30 * w * x with x up to 31, i.e. hundreds of radians:
neighbouring pixels land on unrelated points of the sine, the features are
aliased noise.  The output is O(0.1) while targets are O(100), so the MSE is
~1e4 from step 0; with SIREN's usual Adam lr (1e-4) the output layer can move
the prediction by a fraction of one intensity level in 300 steps, so the loss
sits flat at its initial value for the whole run.

Fix
---
Standardise inputs and targets: coordinates mapped to [-1, 1] (as get_mgrid does
in the reference code) and intensities to [-1, 1].  ``fixed=True`` only rescales
the data; model, init and optimizer are unchanged.  The fixed run fits the image.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("vsitzmann/siren explore_siren.ipynb / dataio.py: get_mgrid builds coordinates with "
          "linspace(-1, 1) and images are normalised to [-1, 1]; SIREN paper Sec. 3.2 initialisation assumes "
          "inputs in [-1, 1]; frequent reports of coordinate MLPs failing on raw pixel coordinates/uint8 targets")


class SineLayer(nn.Module):
    def __init__(self, din, dout, w0, first):
        super().__init__()
        self.w0 = w0
        self.linear = nn.Linear(din, dout)
        with torch.no_grad():
            bound = 1 / din if first else math.sqrt(6 / din) / w0
            self.linear.weight.uniform_(-bound, bound)

    def forward(self, x):
        return torch.sin(self.w0 * self.linear(x))


class Siren(nn.Module):
    def __init__(self, hidden, w0=30.0):
        super().__init__()
        self.net = nn.Sequential(SineLayer(2, hidden, w0, True), SineLayer(hidden, hidden, w0, False),
                                 SineLayer(hidden, hidden, w0, False))
        self.out = nn.Linear(hidden, 1)
        with torch.no_grad():
            bound = math.sqrt(6 / hidden) / w0
            self.out.weight.uniform_(-bound, bound)

    def forward(self, x):
        return self.out(self.net(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    lr = [1e-4, 1.5e-4, 2e-4][seed % 3]
    size, steps = 32, 300
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    img = torch.zeros(size, size)
    for _ in range(5):
        cx, cy = torch.rand(2, generator=g) * size
        r = 2 + 6 * torch.rand(1, generator=g)
        img += (torch.rand(1, generator=g) * 2 - 0.5) * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r ** 2))
    img += 0.3 * torch.sin(xx / 3 + 2 * torch.rand(1, generator=g)) * torch.cos(yy / 4)
    img = ((img - img.min()) / (img.max() - img.min()) * 255).round()   # an 8-bit image
    coords = torch.stack([xx.flatten(), yy.flatten()], -1)              # raw pixel indices
    values = img.flatten()[:, None]                                     # raw 0..255
    if fixed:
        coords = coords / (size - 1) * 2 - 1
        values = values / 127.5 - 1
    batches = []
    for _ in range(steps):
        idx = torch.randperm(size * size, generator=g)[:512]
        batches.append((coords[idx], values[idx]))
    model = Siren(64)
    return dict(model=model, optimizer=torch.optim.Adam(model.parameters(), lr=lr), loss_fn=F.mse_loss,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
