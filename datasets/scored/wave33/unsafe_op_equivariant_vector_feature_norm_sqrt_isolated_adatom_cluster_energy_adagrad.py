"""Energy model for small supported metal clusters / adatom configurations (12-20 atoms) with a
hand-written equivariant message-passing net (PaiNN-like, one interaction): each atom builds
vector features v_i = sum_j W(r_ij) * rhat_ij * (U h_j) from its neighbours inside the cutoff,
turns them into rotation invariants via their norm ||v_i||, and an MLP maps [h_i, ||v_i||] to an
atomic energy; the per-atom energies are averaged and regressed onto z-scored DFT energies per
atom. MSE, Adagrad.

Mechanism: the norm is written as `torch.sqrt((v ** 2).sum(-1))`. Forward is fine everywhere.
But in some configurations of the MD-sampled dataset one atom has drifted away (a desorbed
adatom / evaporated atom) and has no neighbour inside the cutoff, so its v_i is *exactly* the
zero vector. Backward of sqrt at 0 is 1 / (2 * sqrt(0)) = inf, multiplied by d(v^2)/dv = 2v = 0
gives inf * 0 = NaN in the gradient of every filter and projection weight. The run is calm
until the first batch containing such a configuration (the step depends on the shuffle);
Adagrad then writes NaN into the weights and every later loss is NaN.

ORIGIN: `vec_norm`, the module that takes sqrt of the squared vector length.

Fix: `torch.sqrt((v ** 2).sum(-1) + 1e-8)` (the epsilon PaiNN / NequIP implementations use);
data, model and optimizer unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "vec_norm"
SOURCE = ("Known pattern: NaN gradients from sqrt / norm at exactly zero vectors in equivariant "
          "GNNs (PaiNN reference code adds eps inside the sqrt; schnetpack / NequIP issues on 'NaN "
          "forces for isolated atoms'; PyTorch issue on torch.norm backward at 0).")


class VectorNorm(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, v):
        return torch.sqrt((v ** 2).sum(-1) + self.eps)


class EquivariantClusterNet(nn.Module):
    def __init__(self, d, n_rbf, cutoff, eps):
        super().__init__()
        self.embed = nn.Embedding(4, d)
        self.filt = nn.Linear(n_rbf, d)
        self.proj = nn.Linear(d, d)
        self.vec_norm = VectorNorm(eps)
        self.mlp = nn.Sequential(nn.Linear(2 * d, d), nn.SiLU(), nn.Linear(d, 1))
        self.cutoff = cutoff
        self.register_buffer("centers", torch.linspace(0.5, cutoff, n_rbf))

    def forward(self, species, pos):
        h = self.embed(species)                                  # B,N,d
        diff = pos.unsqueeze(1) - pos.unsqueeze(2)               # B,N,N,3  (r_j - r_i)
        N = pos.shape[1]
        r = (diff ** 2).sum(-1) + torch.eye(N) * 100.0           # self-distance pushed out
        r = r.sqrt()
        rhat = diff / r.unsqueeze(-1)
        fc = 0.5 * (torch.cos(torch.pi * r / self.cutoff) + 1) * (r < self.cutoff)
        rbf = torch.exp(-((r.unsqueeze(-1) - self.centers) ** 2) / 0.3)
        w = self.filt(rbf) * fc.unsqueeze(-1)                    # B,N,N,d
        u = self.proj(h).unsqueeze(1)                            # B,1,N,d (neighbour j)
        v = (w * u).unsqueeze(-1) * rhat.unsqueeze(-2)           # B,N,N,d,3
        v = v.sum(2)                                             # B,N,d,3
        s = self.vec_norm(v)                                     # B,N,d
        e = self.mlp(torch.cat([h, s], -1)).squeeze(-1)
        return e.mean(1)


def _clusters(g, n, N, bad_idx):
    species = torch.randint(0, 4, (n, N), generator=g)
    pos = torch.zeros(n, N, 3)
    for i in range(n):
        p = [torch.zeros(3)]
        while len(p) < N:
            base = p[int(torch.randint(0, len(p), (1,), generator=g))]
            cand = base + torch.nn.functional.normalize(torch.randn(3, generator=g), dim=0) * 2.5
            if min(float((cand - q).norm()) for q in p) > 2.1:
                p.append(cand)
        pos[i] = torch.stack(p)
    for i in bad_idx:                      # desorbed adatom, far outside the cutoff
        pos[i, -1] = pos[i, :-1].mean(0) + torch.tensor([0.0, 0.0, 30.0])
    # reference energy per atom: coordination-dependent embedding + pair term
    d = (pos.unsqueeze(1) - pos.unsqueeze(2)).norm(dim=-1) + torch.eye(N) * 100
    coord = (torch.exp(-(d - 2.5) * 2) * (d < 5.0)).sum(-1)
    eps_s = torch.tensor([-1.0, -1.5, -0.7, -2.0])
    e = (eps_s[species] * coord.clamp_min(1e-6).sqrt()).mean(1)
    return species, pos, e


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [32, 48, 24][seed % 3]
    N = [12, 16, 14][seed % 3]
    lr = [0.02, 0.01, 0.03][seed % 3]
    bs = [8, 12, 16][seed % 3]
    steps = 100
    n_data = 200
    bad_step = [30, 55, 75][seed % 3] + int(torch.randint(0, 10, (1,), generator=g))
    torch.manual_seed(seed)
    model = EquivariantClusterNet(d, 12, 5.0, eps=1e-8 if fixed else 0.0)
    idxs = [torch.randint(0, n_data - 5, (bs,), generator=g) for _ in range(steps)]
    idxs[bad_step][0] = n_data - 1                  # the one config with a desorbed adatom
    species, pos, e = _clusters(g, n_data, N, bad_idx=[n_data - 1])
    mu, sd = e[:-1].mean(), e[:-1].std()
    y = (e - mu) / sd
    batches = [((species[i], pos[i]), y[i]) for i in idxs]
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
