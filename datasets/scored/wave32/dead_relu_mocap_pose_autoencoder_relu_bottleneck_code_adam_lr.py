"""Marker-based motion-capture pose autoencoder (for technique clustering): an MLP encoder maps a
frame of 3-D joint positions to a 4-6 unit ReLU code, an MLP decoder reconstructs the pose; MSE,
Adam.

Mechanism: the code layer uses ReLU ("codes should be non-negative, like NMF"), and Adam runs at
lr 0.06-0.1.  The first updates move every code bias and weight by ~lr in the sign of the early
gradients; the pre-activations of the few code units are driven below zero for every frame, the
code becomes exactly zero, no gradient reaches the encoder again, and the decoder can only
output its bias (the mean pose).  The reconstruction loss stalls at the pose variance, finite.

ORIGIN: ``encoder.2`` - the Linear that feeds the ReLU code units: its units are the ones that die
(the hidden ReLU layer before it keeps most units alive), and once the code is all-zero nothing
upstream receives a gradient.

Fix: LeakyReLU(0.1) on the code (same lr, model, data and steps), so a code unit pushed negative
still passes a gradient and recovers.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "encoder.2"
SOURCE = ("Known pattern: ReLU bottleneck units of autoencoders die and the reconstruction "
          "collapses to the mean ('all latent codes are zero', 'autoencoder outputs the average "
          "image' forum threads; dying-ReLU analysis, Lu et al. 2019).")


class PoseAE(nn.Module):
    def __init__(self, d, hidden, code, leaky):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, code),
                                     nn.LeakyReLU(0.1) if leaky else nn.ReLU())
        self.decoder = nn.Sequential(nn.Linear(code, hidden), nn.ReLU(), nn.Linear(hidden, d))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def _data(g, n, J=17):
    # poses from a low-dimensional movement manifold (phase of a squat / jump / swing) + noise
    rest = torch.randn(J, 3, generator=g)
    modes = torch.randn(4, J, 3, generator=g) * 0.6
    phase = 2 * math.pi * torch.rand(n, 1, generator=g)
    amp = torch.rand(n, 4, generator=g)
    coeff = torch.cat([torch.sin(phase), torch.cos(phase), torch.sin(2 * phase), amp[:, :1] - 0.5], 1) * amp
    pose = rest + torch.einsum("nk,kjc->njc", coeff, modes)
    pose = pose + 0.05 * torch.randn(n, J, 3, generator=g)
    x = pose.reshape(n, -1)
    return (x - x.mean(0)) / x.std(0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    hidden = [64, 96, 48][seed % 3]
    code = [4, 6, 5][seed % 3]
    lr = [0.06, 0.1, 0.09][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 150
    model = PoseAE(51, hidden, code, leaky=fixed)
    x = _data(g, bs * steps)
    batches = [(x[i * bs:(i + 1) * bs], x[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
