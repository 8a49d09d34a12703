"""Point-set autoencoder (2-D shape outlines, 24 points) trained with an entropic optimal
transport (Sinkhorn divergence-style, log-domain) reconstruction loss, MLP encoder/decoder,
RMSprop at lr 0.02-0.04.

Mechanism: RMSprop's per-parameter normalisation makes each update ~lr in size from step 1
(no warm-up, no bias correction in torch's RMSprop, so the first updates are even larger:
g / sqrt((1-alpha) g^2) = 10 x lr). At lr ~0.03 the decoder's output layer and the latent
weights move by far more than their scale on every step (update/weight ratios ~1e-1 and more
instead of ~1e-3); after the first update the decoded points are thrown orders of magnitude
away from the data, the OT cost jumps by ~1e6 and either stays there (the network keeps
overshooting) or overflows to inf/NaN a few steps later. At lr 1e-3 the same autoencoder
learns the shapes.

ORIGIN: None: the over-large step size acts on every parameter; no single module starts it.

Fix: RMSprop lr 1e-3; model, data, loss and steps unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Cuturi 2013 Sinkhorn distances; Feydy et al. 2019 (geomloss) log-domain Sinkhorn for point clouds; "
          "Achlioptas et al. 2018 point-cloud autoencoders with EMD/Chamfer losses; torch RMSprop without "
          "bias correction making the first updates ~lr/sqrt(1-alpha)")


def sinkhorn_loss(x, y, eps=0.05, iters=30):
    # x, y: (B, N, 2) point sets with uniform weights; entropic OT cost in the log domain
    B, N, _ = x.shape
    C = ((x.unsqueeze(2) - y.unsqueeze(1)) ** 2).sum(-1)        # (B, N, N)
    log_w = -math.log(N)
    f = torch.zeros(B, N, dtype=x.dtype)
    gg = torch.zeros(B, N, dtype=x.dtype)
    for _ in range(iters):
        f = -eps * torch.logsumexp((gg.unsqueeze(1) - C) / eps + log_w, dim=2)
        gg = -eps * torch.logsumexp((f.unsqueeze(2) - C) / eps + log_w, dim=1)
    P = torch.exp((f.unsqueeze(2) + gg.unsqueeze(1) - C) / eps + 2 * log_w)
    return (P * C).sum((1, 2)).mean()


class PointAE(nn.Module):
    def __init__(self, n_pts, width, latent):
        super().__init__()
        self.n = n_pts
        self.encoder = nn.Sequential(nn.Linear(2 * n_pts, width), nn.ReLU(), nn.Linear(width, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                     nn.Linear(width, 2 * n_pts))

    def forward(self, pts):
        z = self.encoder(pts.flatten(1))
        return self.decoder(z).view(-1, self.n, 2)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [128, 96, 160][seed % 3]
    latent = [8, 6, 12][seed % 3]
    batch = [32, 24, 48][seed % 3]
    lr = 1e-3 if fixed else [0.03, 0.04, 0.02][seed % 3]
    n_pts, steps = 24, 100

    torch.manual_seed(seed)
    model = PointAE(n_pts, width, latent)

    batches = []
    for _ in range(steps):
        # random ellipses / superellipses, rotated, scaled and shifted; point order shuffled
        a = 0.5 + 0.5 * torch.rand(batch, 1, generator=g)
        b = 0.3 + 0.5 * torch.rand(batch, 1, generator=g)
        p = 1.0 + 2.0 * torch.rand(batch, 1, generator=g)
        rot = 6.283 * torch.rand(batch, 1, generator=g)
        t = 6.283 * torch.rand(batch, n_pts, generator=g)
        c, s = torch.cos(t), torch.sin(t)
        xs = a * c.sign() * c.abs() ** (2 / p)
        ys = b * s.sign() * s.abs() ** (2 / p)
        xr = xs * torch.cos(rot) - ys * torch.sin(rot)
        yr = xs * torch.sin(rot) + ys * torch.cos(rot)
        shift = 0.3 * torch.randn(batch, 1, 2, generator=g)
        pts = torch.stack([xr, yr], -1) + shift
        batches.append((pts, pts))

    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": sinkhorn_loss, "batches": batches, "steps": steps}
