"""Single-cell expression autoencoder whose narrow ReLU bottleneck dies in the first steps.

Mechanism: a dimensionality-reduction autoencoder (genes -> hid -> k -> hid -> genes, k = 6-10)
reconstructs scaled single-cell expression (log-normalised, then per-gene z-scored as with
``sc.pp.scale``) with MSE. The latent layer uses ReLU. With Adam at lr 3e-2 / 4e-2 (copied
from a tabular-autoencoder recipe) the first few updates move each latent unit's weights and
bias by ~lr per step, and all k latent units end up <= 0 for every cell within ~5 steps. A
ReLU unit that is negative everywhere gets exactly zero gradient and never recovers; with
the whole bottleneck dead the decoder only sees zeros, outputs its bias, and the loss sits at
the per-gene variance (~1) for the rest of the run. The same lr trains fine once the latent
units cannot die.

ORIGIN: ``encoder.3`` -- the ReLU on the latent code, whose units die.

Fix: LeakyReLU(0.1) on the latent layer (same lr, optimiser, data and init); a latent unit
pushed negative keeps a gradient and is pulled back.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "encoder.3"
SOURCE = ("scRNA-seq autoencoders for dimensionality reduction (e.g. scDeepCluster/DCA-style "
          "dense AEs); 'all latent dimensions are zero' / 'AE outputs the mean cell' reports "
          "with ReLU bottlenecks and Adam lr of a few 1e-2.")


class AE(nn.Module):
    def __init__(self, n_genes, hid, k, leaky):
        super().__init__()
        lat_act = nn.LeakyReLU(0.1) if leaky else nn.ReLU()
        self.encoder = nn.Sequential(nn.Linear(n_genes, hid), nn.ReLU(), nn.Linear(hid, k), lat_act)
        self.decoder = nn.Sequential(nn.Linear(k, hid), nn.ReLU(), nn.Linear(hid, n_genes))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_genes = [300, 400, 250][seed % 3]
    hid = [256, 192, 256][seed % 3]
    k = [8, 10, 6][seed % 3]
    lr = [3e-2, 4e-2, 3e-2][seed % 3]
    bsz = [128, 96, 128][seed % 3]
    steps = 200
    n_types = 6
    base = torch.exp(torch.randn(n_genes, generator=g) - 0.5)
    profiles = base[None] * torch.exp(torch.randn(n_types, n_genes, generator=g) * 0.9)

    def make_batch():
        t = torch.randint(0, n_types, (bsz,), generator=g)
        lib = torch.exp(torch.randn(bsz, 1, generator=g) * 0.4 + 7.0)
        counts = torch.poisson(profiles[t] / profiles[t].sum(1, keepdim=True) * lib, generator=g)
        x = torch.log1p(counts / counts.sum(1, keepdim=True).clamp_min(1) * 1e4)
        return x, x

    batches = [make_batch() for _ in range(steps)]
    # sc.pp.scale: per-gene z-scoring with statistics of the whole dataset, clipped at 10
    allx = torch.cat([b[0] for b in batches])
    mu, sd = allx.mean(0), allx.std(0).clamp_min(1e-3)
    batches = [(((x - mu) / sd).clamp(-10, 10),) * 2 for x, _ in batches]
    model = AE(n_genes, hid, k, leaky=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
