"""Deep kernel learning (MLP feature extractor + exact GP marginal likelihood) with a
hand-written Matern-5/2 kernel. The kernel takes r = sqrt(sum((z_i - z_j)**2)) with no
floor; the diagonal of K(Z, Z) has r == 0 exactly, so sqrt's backward is 1/(2*0) = inf,
which meets the zero coordinate difference (2*0*inf) and turns every kernel/feature
gradient into NaN on the first backward; Adam then writes NaN into the weights.
fixed=True: the distance is taken as sqrt(d2.clamp_min(1e-30)) (the GPyTorch guard).
"""
import math

import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "covar"
SOURCE = ("Matern kernels re-implemented without a distance floor give NaN gradients at "
          "x1 == x2: dfm/tinygp#115, GPflow/GPflow#727 (numerically stable Matern32), "
          "GPyTorch covar_dist clamp_min(1e-30) before sqrt; DKL as in Wilson et al. 2016.")


class Matern52(nn.Module):
    def __init__(self, safe: bool):
        super().__init__()
        self.safe = safe
        self.raw_lengthscale = nn.Parameter(torch.tensor(0.0))
        self.raw_outputscale = nn.Parameter(torch.tensor(0.0))

    def forward(self, z):
        ls = nn.functional.softplus(self.raw_lengthscale) + 1e-4
        zs = z / ls
        diff = zs.unsqueeze(1) - zs.unsqueeze(0)          # (n, n, d), exact zeros on the diagonal
        d2 = (diff ** 2).sum(-1)
        if self.safe:
            r = d2.clamp_min(1e-30).sqrt()
        else:
            r = d2.sqrt()
        s5r = math.sqrt(5.0) * r
        k = (1.0 + s5r + 5.0 / 3.0 * d2) * torch.exp(-s5r)
        return nn.functional.softplus(self.raw_outputscale) * k


class DKLRegressor(nn.Module):
    def __init__(self, d_in, safe):
        super().__init__()
        self.feature = nn.Sequential(
            nn.Linear(d_in, 64), nn.ReLU(),
            nn.Linear(64, 64), nn.ReLU(),
            nn.Linear(64, 3),
        )
        self.covar = Matern52(safe)
        self.raw_noise = nn.Parameter(torch.tensor(-2.0))
        self.mean_const = nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        z = self.feature(x)
        k = self.covar(z)
        noise = nn.functional.softplus(self.raw_noise) + 1e-4
        k = k + (noise + 1e-5) * torch.eye(x.shape[0])
        mean = self.mean_const.expand(x.shape[0])
        return mean, k


def gp_nll(out, y):
    """Negative exact marginal log-likelihood per data point."""
    mean, k = out
    chol, _ = torch.linalg.cholesky_ex(k)
    r = (y - mean).unsqueeze(-1)
    alpha = torch.cholesky_solve(r, chol)
    n = y.shape[0]
    quad = (r * alpha).sum()
    logdet = 2.0 * torch.log(torch.diagonal(chol)).sum()
    return 0.5 * (quad + logdet + n * math.log(2 * math.pi)) / n


def _simulator(x):
    # surrogate target: peak response of a damped driven oscillator-like map of 6 parameters
    w = 1.0 + 0.5 * x[:, 0]
    zeta = 0.3 + 0.2 * torch.sigmoid(2 * x[:, 1])
    drive = x[:, 2] - 0.5 * x[:, 3] * x[:, 4]
    amp = 1.0 / torch.sqrt((1 - w ** 2) ** 2 + (2 * zeta * w) ** 2)
    return amp * torch.cos(drive) + 0.3 * torch.sin(2 * x[:, 5])


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    d_in, n_train, bs, steps = 6, 1024, 64, 200
    x_all = torch.randn(n_train, d_in, generator=g)
    y_all = _simulator(x_all) + 0.05 * torch.randn(n_train, generator=g)
    y_all = (y_all - y_all.mean()) / y_all.std()
    batches = []
    for _ in range(steps):
        idx = torch.randperm(n_train, generator=g)[:bs]
        batches.append((x_all[idx], y_all[idx]))
    model = DKLRegressor(d_in, safe=fixed)
    lr = 5e-3 + 2e-3 * (seed % 3)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=gp_nll, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
