"""Neural-manifold autoencoder: an MLP autoencoder with a 3-unit ReLU latent bottleneck is fit to
z-scored (sqrt-transformed) spike counts of a simulated head-direction / speed population, to
recover the low-dimensional latent (ring + speed) from the recording.

Mechanism: the latent layer is rectified (nn.ReLU, "latents should be non-negative rates") and
has only 3 units. The Adam lr (8e-2 .. 1.2e-1) was copied from a tutorial fitting a much smaller
network. Adam moves every weight by ~lr per step in the sign of its gradient, so within the
first few updates each latent's pre-activation is shifted by several units (the fan-in rows are
moved coherently across 64-96 inputs); once a latent is negative for every trial the ReLU gives
it zero gradient and it never recovers. With only three latents all of them end up dead, the
decoder sees a constant code, and the reconstruction stalls at the per-neuron variance (~1 for
z-scored data). No non-finite value appears.

ORIGIN = "encoder.3": the latent nn.ReLU is where the units die (all-negative input, zero
gradient); the layers before it are intact but receive no gradient afterwards.

Fix: a learning rate suited to this model (Adam 3e-3). Same architecture, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "encoder.3"
SOURCE = ("Neural-manifold autoencoders for population recordings (e.g. Chaudhuri et al. 2019 "
          "head-direction ring; LFADS-style latent models); dead ReLU latents with too-high Adam "
          "lr are a common report (Lu et al. 2019 'Dying ReLU'; forum threads on autoencoders "
          "with constant output)")


class PopAE(nn.Module):
    def __init__(self, n, hid, k):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n, hid), nn.ReLU(), nn.Linear(hid, k), nn.ReLU())
        self.decoder = nn.Sequential(nn.Linear(k, hid), nn.ReLU(), nn.Linear(hid, n))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(7000 + seed)
    n = [96, 64, 80][seed % 3]
    hid = [64, 96, 48][seed % 3]
    bs = [64, 96, 48][seed % 3]
    lr = [0.1, 0.08, 0.12][seed % 3]
    steps = 200
    W = torch.randn(3, n, generator=g)

    def sample(m):
        th = torch.rand(m, generator=g) * 2 * math.pi
        sp = torch.rand(m, generator=g)
        lat = torch.stack([torch.cos(th), torch.sin(th), sp], 1)
        return torch.sqrt(torch.poisson(3 * torch.relu(lat @ W), generator=g))

    cal = sample(5000)
    mu, sd = cal.mean(0), cal.std(0) + 1e-3
    batches = []
    for _ in range(steps):
        x = (sample(bs) - mu) / sd
        batches.append((x, x))
    torch.manual_seed(seed)
    model = PopAE(n, hid, 3)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
