"""MLP VAE (Kingma & Welling style: ReLU encoder -> (mu, logvar), reparameterisation, ReLU decoder,
Bernoulli likelihood via BCE-with-logits summed over pixels, + KL), plain SGD with momentum, on
binary 8x8 images whose rows are independent random bits (pixel marginals are all 0.5).

Mechanism: the lr was copied from a Adagrad/normalised-loss recipe, but the loss is summed over 64
pixels. The inputs are non-negative, so the first big update moves all incoming weights of each
first-layer unit the same way; a couple of overshooting steps push every encoder pre-activation
below zero for every image. The first-layer ReLUs are then dead, z carries no information about
x, the decoder can only model the 0.5 marginals and the loss plateaus at 64*ln2 + KL.
ORIGIN: the encoder's first ReLU (enc.1). Fix: a 5x smaller SGD lr.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "enc.1"
SOURCE = "PyTorch VAE example variants trained with SGD at a large lr on summed BCE; encoder ReLUs all dead, posterior carries no information, loss flat"


class VAE(nn.Module):
    def __init__(self, d, h, z):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.mu = nn.Linear(h, z)
        self.logvar = nn.Linear(h, z)
        self.dec = nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, d))

    def forward(self, x):
        e = self.enc(x)
        mu, logvar = self.mu(e), self.logvar(e)
        zs = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(zs), mu, logvar


def vae_loss(out, x):
    logits, mu, logvar = out
    rec = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.shape[0]
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.shape[0]
    return rec + kl


def build(seed, fixed=False):
    cfg = [dict(h=128, z=8, lr=0.045, bs=32), dict(h=96, z=12, lr=0.04, bs=16), dict(h=192, z=6, lr=0.05, bs=64)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = VAE(64, cfg["h"], cfg["z"])
    steps = 150
    batches = []
    for _ in range(steps):
        rows = (torch.rand(cfg["bs"], 8, 1, generator=g) < 0.5).float()
        x = rows.expand(cfg["bs"], 8, 8).reshape(cfg["bs"], 64)
        batches.append((x, x))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"] / 5 if fixed else cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=vae_loss, batches=batches, steps=steps)
