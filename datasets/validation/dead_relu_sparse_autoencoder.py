"""dead_relu: a sparse autoencoder whose L1 sparsity penalty is d times too strong; nearly all
its ReLU latents die.

Mechanism: a sparse autoencoder (SAE, as used to find interpretable features in a network's
activations) reconstructs standardised activation vectors ``x`` (dimension d) through an
overcomplete ReLU code: ``f = ReLU(encoder(x - b_dec))``, ``x_hat = decoder(f)``, trained with Adam
on reconstruction + lambda * L1 (each latent weighted by its decoder column norm), with lambda
warmed up linearly from 0 as in the published recipes. The lambda of the recipe is meant for a
reconstruction error summed over the d dimensions, but the code uses ``F.mse_loss``, which averages
over them: the sparsity pressure is d times too strong. As the warmup brings lambda towards its
final value, the penalty's gradient (steady, and Adam turns a steady gradient into a full-size
step) drives every latent's pre-activation below zero for every input; a latent that is negative
everywhere gets no gradient from either term and never comes back. Half the latents are dead by
step 50-115 (around the end of the warmup) and 85-99% by the end of the run: the code is nearly
empty, ``x_hat`` is about the decoder bias and the loss sits at the variance of the data, where it
started (a plateau, not a divergence).
The step where the latents go depends on the seed's warmup, lambda and lr; seeds also change d, the
dictionary width, the batch size and the data.

ORIGIN: ``act``, the ReLU of the latent code, whose units die (the encoder before it is fine:
its pre-activations are just all negative).
Fixed: the same model, data, optimizer and warmup with lambda rescaled to the mean-reduced
reconstruction loss (lambda / d): the latents stay alive and the reconstruction error falls.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "dead_relu"
ORIGIN = "act"
SOURCE = (
    "Dead latents in sparse autoencoders trained with an L1 penalty: Bricken et al. 2023, "
    "'Towards Monosemanticity' (dead neurons, resampling), Anthropic's April 2024 SAE update "
    "(lambda warmup, decoder-norm-weighted L1) and Gao et al. 2024, 'Scaling and evaluating "
    "sparse autoencoders' (dead latents, the main failure of L1-penalised ReLU SAEs)."
)


class SparseAutoencoder(nn.Module):
    def __init__(self, d: int, width: int) -> None:
        super().__init__()
        self.encoder = nn.Linear(d, width)
        self.act = nn.ReLU()
        self.decoder = nn.Linear(width, d)
        self.l1 = torch.zeros(())
        with torch.no_grad():
            # Decoder columns of norm 0.1, encoder = decoder transpose, zero biases.
            w = torch.randn(d, width)
            w = 0.1 * w / w.norm(dim=0, keepdim=True)
            self.decoder.weight.copy_(w)
            self.encoder.weight.copy_(w.t())
            self.encoder.bias.zero_()
            self.decoder.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.act(self.encoder(x - self.decoder.bias))
        # The sparsity term, kept for the loss: L1 of the code weighted by decoder column norms.
        self.l1 = (f * self.decoder.weight.norm(dim=0)).sum(dim=1).mean()
        return self.decoder(f)


def _activations(seed: int, steps: int, batch: int, d: int, n_feat: int, k: int) -> list:
    """Vectors built from k of n_feat sparse ground-truth directions, plus noise, standardised."""
    g = torch.Generator().manual_seed(240_000 + seed)
    dirs = torch.randn(n_feat, d, generator=g)
    dirs = dirs / dirs.norm(dim=1, keepdim=True)
    xs = []
    for _ in range(steps):
        idx = torch.rand(batch, n_feat, generator=g).argsort(dim=1)[:, :k]
        mag = 0.5 + 1.5 * torch.rand(batch, k, generator=g)
        coef = torch.zeros(batch, n_feat).scatter(1, idx, mag)
        xs.append(coef @ dirs + 0.05 * torch.randn(batch, d, generator=g))
    allx = torch.cat(xs)
    mu, sd = allx.mean(dim=0), allx.std(dim=0)
    return [((x - mu) / sd, (x - mu) / sd) for x in xs]


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d = rng.choice([24, 32, 48])
    width = d * rng.choice([4, 6, 8])
    n_feat = 2 * d
    k = rng.choice([3, 4, 5])
    batch = rng.choice([64, 96, 128])
    steps = rng.choice([200, 250, 300])
    lr = rng.choice([3e-3, 4e-3, 5e-3])
    lam_recipe = rng.choice([0.5, 0.75, 1.0])  # for a reconstruction error summed over d
    warmup = rng.randint(steps // 10, steps // 4)

    batches = _activations(seed, steps, batch, d, n_feat, k)
    torch.manual_seed(seed)
    model = SparseAutoencoder(d, width)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    lam = lam_recipe / d if fixed else lam_recipe
    done = [0]  # optimizer steps taken: lambda warms up linearly over `warmup` steps
    opt.register_step_post_hook(lambda *_: done.__setitem__(0, done[0] + 1))

    def loss_fn(x_hat: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        ramp = min(1.0, (done[0] + 1) / warmup)
        return nn.functional.mse_loss(x_hat, x) + ramp * lam * model.l1

    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": loss_fn,
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
