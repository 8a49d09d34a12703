"""scVI-like batch-conditional VAE for single-cell integration: log1p-normalised expression
of highly-variable genes plus a one-hot sequencing-batch covariate -> MLP encoder -> (mu,
logvar) -> reparameterised z -> decoder conditioned on the batch one-hot -> expression;
loss = Gaussian reconstruction (sum over genes) + KL(q(z|x) || N(0, I)), averaged over cells;
Adam.

Mechanism (lr_too_high): the learning rate of the group's plain-SGD baseline (0.3-0.5) was
kept when the optimiser was switched to Adam (the scVI default is 1e-3). Adam moves every weight by ~lr
per step, i.e. update/weight ratios of ~1 instead of ~1e-3: the encoder's log-variance head
is thrown to large values within a few steps, exp(logvar) in the KL term and the
reparameterisation sample blow up, and the loss overflows to inf/NaN.

ORIGIN: None - the step size is too large for every parameter; the log-variance head is
merely where the overflow surfaces first.

Fix: lr = 1e-3 (the scVI default), nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("scVI (Lopez et al., Nat. Methods 2018; scvi-tools default Adam lr 1e-3); "
          "'VAE loss becomes NaN' reports traced to a too-high learning rate driving the "
          "log-variance up until exp() overflows")

N_GENES = 200
N_BATCH = 3


class BatchVAE(nn.Module):
    def __init__(self, hid, z, depth):
        super().__init__()
        layers, d = [], N_GENES + N_BATCH
        for _ in range(depth):
            layers += [nn.Linear(d, hid), nn.ReLU()]
            d = hid
        self.encoder = nn.Sequential(*layers)
        self.mu = nn.Linear(hid, z)
        self.logvar = nn.Linear(hid, z)
        self.decoder = nn.Sequential(nn.Linear(z + N_BATCH, hid), nn.ReLU(), nn.Linear(hid, N_GENES))

    def forward(self, x, b):
        h = self.encoder(torch.cat([x, b], 1))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.decoder(torch.cat([z, b], 1)), mu, logvar


def _cells(g, n, z_true=6):
    W = torch.randn(z_true, N_GENES, generator=torch.Generator().manual_seed(11)) * 0.8
    shift = torch.randn(N_BATCH, N_GENES, generator=torch.Generator().manual_seed(12)) * 0.7
    bidx = torch.randint(0, N_BATCH, (n,), generator=g)
    lat = torch.randn(n, z_true, generator=g)
    rate = torch.exp(0.5 + lat @ W / 2.0 + shift[bidx]).clamp(max=200.0)
    counts = torch.poisson(rate, generator=g)
    x = torch.log1p(counts / counts.sum(1, keepdim=True) * 1e3)
    return x, F.one_hot(bidx, N_BATCH).float()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(10000 + seed)
    hid = [128, 64, 96][seed % 3]
    zdim = [10, 8, 16][seed % 3]
    depth = [1, 2, 2][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = [0.5, 0.3, 0.4][seed % 3]
    if fixed:
        lr = 1e-3
    steps = 150

    model = BatchVAE(hid, zdim, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, x):
        recon, mu, logvar = out
        rec = 0.5 * ((recon - x) ** 2).sum(1)
        kl = 0.5 * (mu ** 2 + logvar.exp() - 1.0 - logvar).sum(1)
        return (rec + kl).mean()

    x, b = _cells(g, bs * steps)
    batches = [((x[i * bs:(i + 1) * bs], b[i * bs:(i + 1) * bs]), x[i * bs:(i + 1) * bs])
               for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
