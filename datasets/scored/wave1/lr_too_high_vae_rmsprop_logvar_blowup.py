"""Gaussian VAE on 20-dimensional tabular records (two-layer encoder with mean and log-variance
heads, reparameterised sample, two-layer decoder, summed squared-error reconstruction + analytic
KL). Trained with RMSprop at lr=5e-2, a value that is fine for the small supervised nets it was
copied from but ~50x too large here: RMSprop's per-coordinate normalisation turns every step into
a ~lr sized jump on the very first update, the log-variance head overshoots, exp(logvar) in both
the sampling noise and the KL term becomes enormous: the loss jumps by many orders of magnitude
after step 0 and either turns NaN or never comes back to its starting value.
The fixed run only lowers the learning rate to 1e-3."""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("'VAE loss becomes NaN' reports (PyTorch forums / Keras VAE examples) where the fix is "
          "a smaller learning rate; RMSprop per-coordinate step size ~lr")


class VAE(nn.Module):
    def __init__(self, d, h, z):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.mu = nn.Linear(h, z)
        self.logvar = nn.Linear(h, z)
        self.dec = nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, d))

    def forward(self, x):
        e = self.enc(x)
        mu, logvar = self.mu(e), self.logvar(e)
        zs = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return {"recon": self.dec(zs), "mu": mu, "logvar": logvar, "x": x}


def elbo_loss(out, _y):
    rec = ((out["recon"] - out["x"]) ** 2).sum(1)
    kl = -0.5 * (1 + out["logvar"] - out["mu"] ** 2 - out["logvar"].exp()).sum(1)
    return (rec + kl).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, k = 20, 3
    mix = torch.randn(k, d, generator=g)
    batches = []
    for _ in range(25):
        lat = torch.randn(128, k, generator=g)
        x = torch.tanh(lat @ mix) + 0.1 * torch.randn(128, d, generator=g)
        batches.append((x, torch.zeros(128)))
    model = VAE(d, 64, 4)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3 if fixed else 5e-2)
    steps = 200
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=elbo_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
