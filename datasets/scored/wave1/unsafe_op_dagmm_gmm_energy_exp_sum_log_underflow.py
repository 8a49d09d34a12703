"""DAGMM (Deep Autoencoding Gaussian Mixture Model) for unsupervised anomaly detection on
16-feature records that lie near a low-dimensional manifold, with a couple of anomalous records
per 1024-record batch, as the method intends. The compression network's 2-d code is concatenated
with the reconstruction features (relative Euclidean error, cosine similarity), an estimation
network gives soft memberships for 2 components, and the GMM module computes the sample energy
E(z) = -log sum_k phi_k exp(-0.5 d_k(z)) / sqrt(|2 pi Sigma_k|) the literal way: exp of each
term, sum, then log. The normal records occupy a very thin region of z (some coordinates have a
std of a few 1e-2), so an anomalous record is hundreds of Mahalanobis units from every component:
every exp term underflows to exactly 0 in float32, log(0) = -inf, the energy is +inf and the loss
and gradients turn inf/NaN within the first steps. The fixed run computes the same energy with
torch.logsumexp over the log-terms; nothing else changes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "gmm"
SOURCE = ("Zong et al. 2018 DAGMM; public PyTorch ports (e.g. danieltan07/dagmm) compute "
          "log(sum(exp(.)) + eps) and users report NaN/inf energies without the eps/logsumexp")


class GMMEnergy(nn.Module):
    def __init__(self, stable):
        super().__init__()
        self.stable = stable

    def forward(self, z, gamma):
        n, d = z.shape
        phi = gamma.mean(0)                                             # K
        mu = (gamma.t() @ z) / gamma.sum(0)[:, None]                    # K x d
        diff = z[:, None, :] - mu[None]                                 # N x K x d
        cov = torch.einsum("nk,nki,nkj->kij", gamma, diff, diff) / gamma.sum(0)[:, None, None]
        cov = cov + 1e-6 * torch.eye(d)
        inv = torch.linalg.inv(cov)
        maha = torch.einsum("nki,kij,nkj->nk", diff, inv, diff)
        log_det = torch.logdet(2 * math.pi * cov)
        log_terms = torch.log(phi)[None] - 0.5 * maha - 0.5 * log_det[None]
        if self.stable:
            energy = -torch.logsumexp(log_terms, dim=1)
        else:
            energy = -torch.log(torch.exp(log_terms).sum(1))
        return energy, torch.diagonal(cov, dim1=1, dim2=2)


class DAGMM(nn.Module):
    def __init__(self, d_in, n_gmm, stable):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.Tanh(), nn.Linear(32, 8), nn.Tanh(), nn.Linear(8, 2))
        self.decoder = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, d_in))
        self.estimation = nn.Sequential(nn.Linear(4, 10), nn.Tanh(), nn.Linear(10, n_gmm))
        self.gmm = GMMEnergy(stable)

    def forward(self, x):
        zc = self.encoder(x)
        xh = self.decoder(zc)
        rel = (x - xh).norm(dim=1, keepdim=True) / x.norm(dim=1, keepdim=True)
        cos = F.cosine_similarity(x, xh, dim=1)[:, None]
        z = torch.cat([zc, rel, cos], 1)
        gamma = torch.softmax(self.estimation(z), 1)
        energy, cov_diag = self.gmm(z, gamma)
        return {"x": x, "x_hat": xh, "energy": energy, "cov_diag": cov_diag}


def dagmm_loss(out, _y, lambda_energy=0.1, lambda_cov=0.005):
    rec = ((out["x"] - out["x_hat"]) ** 2).sum(1).mean()
    return rec + lambda_energy * out["energy"].mean() + lambda_cov * (1.0 / out["cov_diag"]).sum()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = 16
    basis = torch.linalg.qr(torch.randn(d_in, 2, generator=g))[0].t() * 4.0
    batches = []
    for _ in range(40):
        theta = 2 * math.pi * torch.rand(1024, generator=g)
        ring = torch.stack([torch.cos(theta), torch.sin(theta)], 1)
        x = ring @ basis + 0.02 * torch.randn(1024, d_in, generator=g)
        n_anom = 2
        x[:n_anom] = torch.randn(n_anom, d_in, generator=g)
        perm = torch.randperm(1024, generator=g)
        batches.append((x[perm], torch.zeros(1024)))
    model = DAGMM(d_in, n_gmm=2, stable=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps = 200
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=dagmm_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
