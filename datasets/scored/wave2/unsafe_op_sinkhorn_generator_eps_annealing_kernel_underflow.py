"""Generative MLP trained with an entropic optimal-transport (Sinkhorn) loss between a batch of
generated 2-D points and a batch of data points (8 Gaussians on a ring), in the style of
Sinkhorn-AutoDiff / OT-GAN without a critic. The entropic regulariser eps is annealed
geometrically towards a small value to sharpen the transport plan, and the Sinkhorn scalings
are computed in the plain (non-log) domain: K = exp(-C / eps), u = a / (K v), v = b / (K^T u).
Training is calm while eps is large, but once eps has decayed so that C / eps > ~100 for every
data point seen by some generated point (a generated point in a gap between modes), its whole
row of K underflows to exactly 0 in float32, K v = 0, u = a / 0 = inf, and inf * 0 gives NaN in
the plan and the loss, many steps into the run. The fixed run only evaluates the same Sinkhorn
iterations in the log domain (logsumexp), which cannot underflow."""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "sinkhorn"
SOURCE = ("Sinkhorn divergences for generative modelling (Genevay et al. 2018, 'Learning "
          "Generative Models with Sinkhorn Divergences'); POT / geomloss docs and issues: "
          "'sinkhorn returns NaN for small reg, use the log-stabilised version'")


class Sinkhorn(nn.Module):
    def __init__(self, eps0, eps_min, decay, n_iter, log_domain):
        super().__init__()
        self.eps0, self.eps_min, self.decay = eps0, eps_min, decay
        self.n_iter, self.log_domain = n_iter, log_domain
        self.register_buffer("t", torch.zeros((), dtype=torch.long))

    def forward(self, xg, xd):
        eps = max(self.eps_min, self.eps0 * self.decay ** int(self.t))
        self.t += 1
        C = torch.cdist(xg, xd) ** 2
        n, m = C.shape
        with torch.no_grad():
            if self.log_domain:
                log_a = torch.full((n,), -math.log(n))
                log_b = torch.full((m,), -math.log(m))
                f = torch.zeros(n)
                gpot = torch.zeros(m)
                for _ in range(self.n_iter):
                    f = eps * (log_a - torch.logsumexp((gpot[None, :] - C) / eps, dim=1))
                    gpot = eps * (log_b - torch.logsumexp((f[:, None] - C) / eps, dim=0))
                P = torch.exp((f[:, None] + gpot[None, :] - C) / eps)
            else:
                a = torch.full((n,), 1.0 / n)
                b = torch.full((m,), 1.0 / m)
                K = torch.exp(-C / eps)
                v = torch.ones(m)
                for _ in range(self.n_iter):
                    u = a / (K @ v)
                    v = b / (K.t() @ u)
                P = u[:, None] * K * v[None, :]
        return (P * C).sum()


class SinkhornGenerator(nn.Module):
    def __init__(self, z_dim, width, depth, sinkhorn):
        super().__init__()
        layers, d = [], z_dim
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 2))
        self.gen = nn.Sequential(*layers)
        self.sinkhorn = sinkhorn

    def forward(self, z, x_data):
        xg = self.gen(z)
        return {"samples": xg, "ot_cost": self.sinkhorn(xg, x_data)}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4040 + seed)
    z_dim = 4
    width = [64, 48, 64][seed % 3]
    depth = [2, 3, 2][seed % 3]
    batch = [128, 96, 160][seed % 3]
    steps = [200, 220, 180][seed % 3]
    decay = [0.97, 0.975, 0.965][seed % 3]
    eps_min = [0.003, 0.004, 0.002][seed % 3]

    ang = torch.arange(8) * (2 * math.pi / 8)
    centers = 2.0 * torch.stack([torch.cos(ang), torch.sin(ang)], 1)
    batches = []
    for _ in range(steps):
        z = torch.randn(batch, z_dim, generator=g)
        c = torch.randint(0, 8, (batch,), generator=g)
        xd = centers[c] + 0.1 * torch.randn(batch, 2, generator=g)
        batches.append(((z, xd), torch.zeros(batch)))

    sk = Sinkhorn(eps0=1.0, eps_min=eps_min, decay=decay, n_iter=30, log_domain=fixed)
    model = SinkhornGenerator(z_dim, width, depth, sk)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    def loss_fn(out, y):
        return out["ot_cost"]

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
