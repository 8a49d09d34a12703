"""Sliced-Wasserstein autoencoder (Kolouri et al. 2019): an MLP encoder maps 64-D binary-ish
sprite vectors to a 2-D code, an MLP decoder reconstructs them, and the code distribution is
matched to a ring-shaped prior with the sliced Wasserstein distance, computed on 50 random
projection directions that are resampled at every step, against prior samples that are also
fresh each step. The model returns a dict and the loss reads its 'recon' and 'z' entries.
The SW term jitters from step to step (new directions, new prior draws) and is sometimes
larger late in training than early, which looks alarming on a dashboard, but it is only
Monte-Carlo noise; the total loss falls steadily."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Kolouri et al. 2019 'Sliced-Wasserstein Autoencoder: An Embarrassingly Simple "
          "Generative Model' (random projections resampled per batch)")


class SWAE(nn.Module):
    def __init__(self, d=64, h=128, zdim=2):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, zdim))
        self.decoder = nn.Sequential(nn.Linear(zdim, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, d))

    def forward(self, x):
        z = self.encoder(x)
        return {"recon": self.decoder(z), "z": z}


def sliced_w2(z, prior, n_proj=50):
    theta = F.normalize(torch.randn(n_proj, z.shape[1]), dim=1)   # fresh directions each call
    pz = torch.sort(z @ theta.t(), dim=0)[0]
    pp = torch.sort(prior @ theta.t(), dim=0)[0]
    return ((pz - pp) ** 2).mean()


def swae_loss(out, target, lam=10.0):
    x, prior = target["x"], target["prior"]
    rec = F.binary_cross_entropy_with_logits(out["recon"], x, reduction="sum") / x.shape[0]
    return rec + lam * sliced_w2(out["z"], prior)


def _sprites(g, n, base):
    k = torch.randint(0, 10, (n,), generator=g)
    x = base[k]
    flip = torch.rand(n, 64, generator=g) < 0.05
    return torch.where(flip, 1 - x, x)


def _ring_prior(g, n):
    a = 2 * math.pi * torch.rand(n, generator=g)
    r = 1.0 + 0.1 * torch.randn(n, generator=g)
    return torch.stack([r * torch.cos(a), r * torch.sin(a)], 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17000 + seed)
    model = SWAE()
    steps, bs = 200, 64
    base = (torch.rand(10, 64, generator=g) < 0.3).float()     # 10 sprite prototypes
    batches = []
    for s in range(steps):
        x = _sprites(g, bs, base)
        batches.append((x, {"x": x, "prior": _ring_prior(g, bs)}))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=swae_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
