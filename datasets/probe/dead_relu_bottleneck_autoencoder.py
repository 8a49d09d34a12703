"""MLP autoencoder with a ReLU on its 6-unit bottleneck code, Adam at lr 3e-2.

Mechanism
---------
The code layer ``encoder.2`` reads the post-ReLU hidden activations, which are
all non-negative, so for each code unit j the gradient dL/dW[j, i] = delta_j * a_i
has the same sign for every input i.  Adam's first, sign-like updates therefore
move unit j's pre-activation coherently by about lr * sum_i a_i (several units
of pre-activation per step at lr 3e-2): units with a positive error signal are
pushed below zero for every image within a step or two, and the remaining ones
overshoot and are pushed down on the following steps.  By step 2-6 (seeds 0-2)
every unit of the ReLU code (``encoder.3``) is 0 for every input; its
gradient is exactly zero, so nothing upstream can ever revive it.  The decoder
then sees a constant code and can only output the mean image: the inputs are
standardised, so the reconstruction loss stays at the data variance (its value
at initialisation) for the rest of the run, finite everywhere.

Fix
---
Keep a gradient path through the code: LeakyReLU(0.1) on the bottleneck (or a
linear code, or a smaller learning rate).  ``fixed=True`` only swaps the code
activation; the lr, data and initialisation are the same.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "encoder.3"
SOURCE = ("Dying ReLU after a large update (CS231n notes: 'a large gradient flowing through a ReLU neuron could "
          "cause the weights to update in such a way that the neuron will never activate on any datapoint again'); "
          "common 'autoencoder outputs the same image for every input' reports with a ReLU-activated code layer")


class AutoEncoder(nn.Module):
    def __init__(self, d, hidden, code, code_act):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, code), code_act())
        self.decoder = nn.Sequential(nn.Linear(code, hidden), nn.ReLU(), nn.Linear(hidden, d))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def _blobs(g, n, size=16):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    cx = torch.rand(n, 1, 1, generator=g) * size
    cy = torch.rand(n, 1, 1, generator=g) * size
    r = 2 + 3 * torch.rand(n, 1, 1, generator=g)
    amp = 0.5 + 0.5 * torch.rand(n, 1, 1, generator=g)
    return (amp * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r ** 2))).reshape(n, -1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    steps = 300
    ref = _blobs(g, 2048)                      # standardise with dataset statistics
    mean_img, std = ref.mean(0), ref.std()
    batches = []
    for _ in range(steps):
        x = (_blobs(g, 64) - mean_img) / std   # 16x16 images, zero-mean, unit scale
        batches.append((x, x))
    torch.manual_seed(seed)
    code_act = (lambda: nn.LeakyReLU(0.1)) if fixed else nn.ReLU
    model = AutoEncoder(256, 128, 6, code_act)
    return dict(model=model, optimizer=torch.optim.Adam(model.parameters(), lr=3e-2), loss_fn=F.mse_loss,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
