"""Gaussian VAE on single-cell expression profiles (scVI / scanpy-style preprocessing): raw UMI
counts are library-size normalised (counts / total * 1e4), log1p-transformed and fed to the
encoder.  The pipeline skipped ``filter_cells(min_counts=...)``, so one mini-batch mid-run holds
an empty droplet whose total count is 0; its normalised row is 0/0 = NaN.  The NaN row enters
the first encoder layer, the mean ELBO loss of that batch is NaN, the optimiser writes NaN into
every weight and the run never recovers.  The fix filters the empty cell out of that batch (the
rest of the data and the run are unchanged)."""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("scanpy pp.normalize_total on unfiltered droplets (empty barcodes with zero counts) -> NaN rows; "
          "Lopez et al. 2018 scVI; common 'loss becomes nan after N iterations' VAE reports")

N_GENES, LATENT, HID = 50, 6, 64


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(N_GENES, HID), nn.Softplus(), nn.Linear(HID, HID), nn.Softplus())
        self.mu = nn.Linear(HID, LATENT)
        self.logvar = nn.Linear(HID, LATENT)
        self.decoder = nn.Sequential(nn.Linear(LATENT, HID), nn.Softplus(), nn.Linear(HID, N_GENES))

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h).clamp(-8, 8)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return {"recon": self.decoder(z), "mu": mu, "logvar": logvar}


def elbo_loss(out, x):
    rec = ((out["recon"] - x) ** 2).sum(1)
    kl = -0.5 * (1 + out["logvar"] - out["mu"] ** 2 - out["logvar"].exp()).sum(1)
    return (rec + kl).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_types = 5
    type_profile = torch.rand(n_types, N_GENES, generator=g) ** 3 * 8 + 0.05

    def counts(n):
        t = torch.randint(0, n_types, (n,), generator=g)
        depth = torch.exp(torch.randn(n, 1, generator=g) * 0.4 + 6.0)
        rate = type_profile[t] / type_profile[t].sum(1, keepdim=True) * depth
        return torch.poisson(rate, generator=g)

    def preprocess(c):
        total = c.sum(1, keepdim=True)
        return torch.log1p(c / total * 1e4) / 5.0

    steps, bs, bad_step = 160, 64, 70
    batches = []
    for s in range(steps):
        c = counts(bs)
        if s == bad_step:
            c[17] = 0.0                           # empty droplet barcode, total UMI = 0
            if fixed:
                c = c[c.sum(1) > 0]               # filter_cells(min_counts=1)
        x = preprocess(c)
        batches.append((x, x))
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=elbo_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
