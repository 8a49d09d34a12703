"""Gaussian VAE on 30-dimensional tabular records with linear KL annealing (beta is 0 for 30 steps,
then ramps linearly to 1 by step 120, Bowman et al. 2016). During the warm-up the reported loss is
reconstruction + beta * KL: it first drops quickly while beta ~ 0 and then RISES for a while as
beta (and hence the weight of the already-large KL term) increases, which looks like divergence
but is just the changing objective; once beta reaches 1 the ELBO decreases steadily. Adam with a
standard learning rate, no NaN, no instability. Healthy run."""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Bowman et al. 2016 KL cost annealing for VAEs; loss rises during the beta warm-up"


class AnnealedVAE(nn.Module):
    def __init__(self, d, h=64, z=6, delay=30, warmup=90):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, h), nn.SiLU(), nn.Linear(h, 2 * z))
        self.dec = nn.Sequential(nn.Linear(z, h), nn.SiLU(), nn.Linear(h, d))
        self.register_buffer("step", torch.zeros(()))
        self.delay, self.warmup = delay, warmup

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, -1)
        zs = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        beta = torch.clamp((self.step - self.delay) / self.warmup, min=0.0, max=1.0)
        if self.training:
            self.step += 1
        return {"x": x, "recon": self.dec(zs), "mu": mu, "logvar": logvar, "beta": beta}


def annealed_elbo(out, _y):
    rec = ((out["recon"] - out["x"]) ** 2).sum(1).mean()
    kl = (-0.5 * (1 + out["logvar"] - out["mu"] ** 2 - out["logvar"].exp()).sum(1)).mean()
    return rec + out["beta"] * kl


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, k = 30, 4
    mix = torch.randn(k, d, generator=g)
    batches = []
    for _ in range(25):
        lat = torch.randn(128, k, generator=g)
        x = torch.tanh(lat @ mix / 2) * 2 + 0.05 * torch.randn(128, d, generator=g)
        batches.append((x, torch.zeros(128)))
    model = AnnealedVAE(d)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps = 250
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=annealed_elbo, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
