"""DCA-style count autoencoder for single-cell RNA-seq: log1p size-normalised counts of 64 genes
are compressed to an 8-d code and decoded to a per-gene negative-binomial mean (times the size
factor) with a learned per-gene dispersion; loss = mean NB negative log-likelihood, optimiser
Adam.  In one of the first count shards two cells were written by a join that filled missing
counts with the int32 sentinel 2147483647 (np.iinfo(np.int32).max).  Their NB gradient w.r.t. the
log-mean is about -theta*y/(theta+mu) ~ -1e8 per entry, eight orders of magnitude above normal,
and it reaches the decoder, the mean head and (through them) the encoder.  Adam's first moment
carries that direction for a few more steps (the predicted means are pushed up and the loss
rises), while the second-moment estimate v, with beta2 = 0.999, keeps the squared spike for
thousands of steps, so every later update of those weights is ~1e-8 of its normal size: the loss
freezes above its starting value for the rest of the run, finite throughout.  Fixed: the same run
with the two sentinel rows dropped from that shard, nothing else changed."""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "enc.0"
SOURCE = ("Eraslan et al. 2019 DCA (deep count autoencoder, NB/ZINB loss); count tables whose missing "
          "entries were filled with an int32-max sentinel, and the known Adam failure mode where one "
          "huge-gradient batch inflates the second moment and stalls training for thousands of steps")


class CountAE(nn.Module):
    def __init__(self, n_genes=64, hidden=32, code=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(n_genes, hidden), nn.ELU(), nn.Linear(hidden, code), nn.ELU())
        self.dec = nn.Sequential(nn.Linear(code, hidden), nn.ELU())
        self.mean_head = nn.Linear(hidden, n_genes)
        self.log_theta = nn.Parameter(torch.zeros(n_genes))

    def forward(self, counts, size_factor):
        h = self.dec(self.enc(torch.log1p(counts / size_factor)))
        log_mu = self.mean_head(h) + torch.log(size_factor)
        return {"log_mu": log_mu, "theta": torch.exp(self.log_theta).expand_as(log_mu)}


def nb_nll(y, log_mu, theta):
    mu = torch.exp(log_mu)
    log_theta_mu = torch.log(theta + mu)
    ll = (torch.lgamma(y + theta) - torch.lgamma(theta) - torch.lgamma(y + 1)
          + theta * (torch.log(theta) - log_theta_mu) + y * (log_mu - log_theta_mu))
    return -ll.mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    G, bs, steps, bad_step = 64, 64, 150, 2
    base = torch.randn(G, generator=g) * 0.8 + 1.8
    load = torch.randn(3, G, generator=g) * 0.9

    def sample(n):
        z = torch.randn(n, 3, generator=g)
        sf = torch.exp(torch.randn(n, 1, generator=g) * 0.3)
        log_mu = base + z @ load + torch.log(sf)
        lam = torch.exp(log_mu + 0.5 * torch.randn(n, G, generator=g) - 0.125)   # gamma-like overdispersion
        return torch.poisson(lam, generator=g), sf

    batches = []
    for s in range(steps):
        y, sf = sample(bs)
        if s == bad_step:
            y[[11, 40]] = 2147483647.0                 # int32-max fill value for missing counts
            if fixed:
                keep = (y < 2147483647.0).all(dim=1)
                y, sf = y[keep], sf[keep]
        batches.append(((y, sf), y))

    model = CountAE(G)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss_fn(out, target):
        return nb_nll(target, out["log_mu"], out["theta"])

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
