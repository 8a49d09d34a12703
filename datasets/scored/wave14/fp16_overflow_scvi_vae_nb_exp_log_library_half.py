"""scVI (Lopez et al. 2018) variational autoencoder for single-cell UMI counts, with the
original *learned* library-size encoder (``use_observed_lib_size=False``), trained under
float16 autocast.  The decoder computes ``px_rate = torch.exp(library) * px_scale`` in half.

Mechanism
---------
Under fp16 autocast the library encoder's last Linear (``l_encoder.mean``) returns a half
tensor; ``torch.exp`` keeps half precision (on CPU as well), and half overflows at 65504,
i.e. for log-library > 11.09.  The user initialised the encoder's output bias at the median
log library size (~9.6) with a tight posterior (log-variance bias -4) for faster
convergence, so the first forward is finite.  As soon as the encoder starts to track
sequencing depth (1-25 Adam steps depending on lr), its estimate for the deepest cells
(65k-150k UMIs, the top ~1% of a 10x dataset) passes 11.09: exp() returns inf, the NB mean is inf,
x * (log mu - log(theta + mu)) is inf - inf = NaN and the ELBO is NaN.  A GradScaler would not
help: the overflow is in the forward pass.

ORIGIN
------
``l_encoder.mean``: the Linear whose half-precision output (the log library) is
exponentiated and overflows; everything after it only propagates the inf/NaN.

Fix
---
Compute the rate in float32 (``torch.exp(library.float()) * px_scale.float()`` with
autocast disabled for that line, the usual "likelihood in fp32" rule); same model,
same fp16 autocast for the networks, same data and optimiser.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "l_encoder.mean"
SOURCE = ("scVI / scvi-tools VAE with learned library size (use_observed_lib_size=False) "
          "run under fp16 mixed precision; known pattern: exp() of a half log-count "
          "overflows past 65504 for deeply sequenced cells")


class Encoder(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, n_hidden), nn.BatchNorm1d(n_hidden), nn.ReLU())
        self.mean = nn.Linear(n_hidden, n_out)
        self.logvar = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        h = self.net(x)
        return self.mean(h), self.logvar(h).clamp(-10, 6)


class SCVI(nn.Module):
    def __init__(self, n_genes, n_hidden, n_latent, l_init, fixed, seed):
        super().__init__()
        self.fixed = fixed
        self.z_encoder = Encoder(n_genes, n_hidden, n_latent)
        self.l_encoder = Encoder(n_genes, n_hidden, 1)
        self.decoder = nn.Sequential(nn.Linear(n_latent, n_hidden), nn.BatchNorm1d(n_hidden),
                                     nn.ReLU(), nn.Linear(n_hidden, n_genes))
        self.px_r = nn.Parameter(torch.randn(n_genes) * 0.1 + 1.0)
        with torch.no_grad():
            self.l_encoder.mean.bias.fill_(l_init)   # start at the median log library size
            self.l_encoder.logvar.bias.fill_(-4.0)   # and with a tight library posterior
        self.g = torch.Generator().manual_seed(seed)

    def forward(self, x):
        xl = torch.log1p(x)
        qz_m, qz_lv = self.z_encoder(xl)
        ql_m, ql_lv = self.l_encoder(xl)
        # reparameterised samples, eps drawn in the dtype of the mean (as Normal.rsample does)
        z = qz_m + torch.exp(0.5 * qz_lv) * torch.randn(qz_m.shape, generator=self.g,
                                                        dtype=qz_m.dtype)
        library = ql_m + torch.exp(0.5 * ql_lv) * torch.randn(ql_m.shape, generator=self.g,
                                                              dtype=ql_m.dtype)
        px_scale = torch.softmax(self.decoder(z), dim=-1)
        if self.fixed:
            with torch.autocast("cpu", enabled=False):
                px_rate = torch.exp(library.float()) * px_scale.float()
        else:
            px_rate = torch.exp(library) * px_scale          # half: inf once library > 11.09
        theta = torch.exp(self.px_r)
        return px_rate, theta, qz_m, qz_lv, ql_m, ql_lv


def _nb_log_likelihood(x, mu, theta, eps=1e-8):
    log_theta_mu_eps = torch.log(theta + mu + eps)
    return (theta * (torch.log(theta + eps) - log_theta_mu_eps)
            + x * (torch.log(mu + eps) - log_theta_mu_eps)
            + torch.lgamma(x + theta) - torch.lgamma(theta) - torch.lgamma(x + 1.0))


def _make_loss(l_mean, l_var):
    def loss_fn(out, x):
        px_rate, theta, qz_m, qz_lv, ql_m, ql_lv = out
        rec = -_nb_log_likelihood(x, px_rate, theta).sum(-1)
        kl_z = 0.5 * (torch.exp(qz_lv) + qz_m ** 2 - 1.0 - qz_lv).sum(-1)
        kl_l = 0.5 * (torch.exp(ql_lv) / l_var + (ql_m - l_mean) ** 2 / l_var - 1.0
                      - ql_lv + math.log(l_var)).sum(-1)
        return (rec + kl_z + kl_l).mean() / x.shape[1]       # per-gene ELBO
    return loss_fn


def _counts(g, n_cells, n_genes, n_types, med_lib, sd_log):
    prog = torch.softmax(torch.randn(n_types, n_genes, generator=g) * 1.5, dim=-1)
    types = torch.randint(0, n_types, (n_cells,), generator=g)
    lib = med_lib * torch.exp(sd_log * torch.randn(n_cells, generator=g))
    mu = lib[:, None] * prog[types]
    theta = 5.0
    lam = torch._standard_gamma(torch.full_like(mu, theta), generator=g) * mu / theta
    return torch.poisson(lam, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(G=200, H=64, Z=8, B=64, lr=1e-3, steps=100, med=15000.0, sd=0.6),
           dict(G=300, H=96, Z=10, B=48, lr=2e-3, steps=90, med=12000.0, sd=0.7),
           dict(G=160, H=48, Z=6, B=96, lr=5e-4, steps=120, med=18000.0, sd=0.5)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    n = cfg["B"] * cfg["steps"]
    X = _counts(g, n, cfg["G"], 6, cfg["med"], cfg["sd"])
    loglib = torch.log(X.sum(1))
    l_mean, l_var = float(loglib.mean()), float(loglib.var())
    model = SCVI(cfg["G"], cfg["H"], cfg["Z"], float(loglib.median()), fixed, seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], eps=1e-4)
    B = cfg["B"]
    batches = [(X[i * B:(i + 1) * B], X[i * B:(i + 1) * B]) for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=_make_loss(l_mean, l_var), batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16)
