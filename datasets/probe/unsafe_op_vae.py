"""unsafe_op: a hand-written Bernoulli log-likelihood in an MLP VAE hits 0 * log(0) = NaN.

Mechanism: a small MLP VAE (one-hidden-layer encoder to mu / log-variance, reparameterised
latent, one-hidden-layer decoder ending in a Sigmoid) models binarised document scans: white
paper (1) with a few dark strokes (0) inside a writing area, and a 2-3 pixel page margin that is
white in every image. Adam, summed-over-pixels ELBO, nothing exotic; the loss falls steadily
from about 70-100 nats to about 25-30. The reconstruction term is written by hand, as in many
tutorials: ``-(x * log(p) + (1 - x) * log(1 - p))``. For margin pixels the target is always 1,
so the decoder keeps pushing their logits up (Adam's normalised steps keep moving them even as
the gradient 1 - p shrinks), and in float32 ``sigmoid(a)`` rounds to exactly 1.0 once a > 16.6.
Then ``log(1 - p) = log(0) = -inf``, and ``(1 - x) * log(1 - p) = 0 * -inf = NaN``: the loss is
NaN although every activation, weight and gradient was finite and moderate on the step before.
Which step that is depends on the seed's lr, widths, batch size and margin: around step 50-170
for most seeds (a seed whose margin logits stay below 16.6 for the whole run does not fail).

ORIGIN: ``decoder.3``, the decoder's Sigmoid, whose output reaches exactly 1.0 (the forward
pass up to it is finite and calm; the loss's log(1 - p) is where it breaks).
Fixed: the same model, data and optimizer with the reconstruction term computed by
``F.binary_cross_entropy`` (which clamps its logs at -100), the library's safe form of the same
loss.
"""

from __future__ import annotations

import random

import torch
from torch import nn
from torch.nn import functional as F

CAUSE = "unsafe_op"
ORIGIN = "decoder.3"
SOURCE = (
    "Kingma & Welling 2014 (VAE with a Bernoulli decoder); the hand-written "
    "-(x*log(p) + (1-x)*log(1-p)) of many VAE tutorials, and forum reports of a VAE loss that "
    "turns NaN mid-training once the sigmoid output rounds to exactly 1.0 in float32 "
    "(PyTorch's BCELoss clamps its log outputs at -100 for this reason)."
)


class VAE(nn.Module):
    def __init__(self, dim: int, hidden: int, latent: int, seed: int) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(
            nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, dim), nn.Sigmoid()
        )
        # the reparameterisation noise has its own generator, so that the run is reproducible
        self.noise = torch.Generator().manual_seed(440_000 + seed)

    def forward(self, x: torch.Tensor) -> tuple:
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h)
        eps = torch.randn(mu.shape, generator=self.noise)
        z = mu + eps * torch.exp(0.5 * logvar)
        return self.decoder(z), mu, logvar


def _handwritten_bce(p: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return -(x * torch.log(p) + (1 - x) * torch.log(1 - p))


def _library_bce(p: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return F.binary_cross_entropy(p, x, reduction="none")


def make_loss(safe: bool):
    bce = _library_bce if safe else _handwritten_bce

    def loss_fn(out: tuple, x: torch.Tensor) -> torch.Tensor:
        p, mu, logvar = out
        recon = bce(p, x).sum(dim=1)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)
        return (recon + kl).mean()

    return loss_fn


def _data(seed: int, steps: int, batch: int, side: int, margin: int) -> list:
    """Binarised scans: white paper (1) with a few dark strokes (0) in the writing area; the
    page margin is always white."""
    g = torch.Generator().manual_seed(450_000 + seed)
    batches = []
    inner = side - 2 * margin
    for _ in range(steps):
        img = torch.ones(batch, side, side)
        for b in range(batch):
            for _ in range(int(torch.randint(2, 5, (1,), generator=g))):
                r0, c0 = torch.randint(0, inner, (2,), generator=g).tolist()
                length = int(torch.randint(2, inner, (1,), generator=g))
                if torch.rand(1, generator=g).item() < 0.5:
                    img[b, margin + r0, margin + c0 : margin + min(inner, c0 + length)] = 0.0
                else:
                    img[b, margin + r0 : margin + min(inner, r0 + length), margin + c0] = 0.0
        batches.append((img.flatten(1), img.flatten(1)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    side = rng.choice([10, 12])
    margin = rng.choice([2, 3])
    hidden = rng.choice([64, 128])
    latent = rng.choice([4, 8])
    batch = rng.choice([32, 64])
    steps = rng.choice([160, 180, 200])
    lr = rng.choice([5e-3, 7e-3])

    torch.manual_seed(seed)
    model = VAE(side * side, hidden, latent, seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": make_loss(safe=fixed),
        "batches": _data(seed, steps, batch, side, margin),
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
