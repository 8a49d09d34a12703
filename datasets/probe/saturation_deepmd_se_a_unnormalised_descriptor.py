"""DeePMD-style interatomic potential (se_e2_a descriptor + tanh fitting net) for a
periodic Lennard-Jones liquid, re-implemented without the descriptor's 1/N_c normalisation.

Mechanism: DeePMD's se_e2_a descriptor is
    T_i = (1/N_c) * sum_j G(s(r_ij))^T R~_ij ,   D_i = T_i T_i<^T ,
i.e. a neighbour *average* of tanh embedding-net features, then a quadratic contraction.
The re-implementation dropped the 1/N_c (it reads like an ordinary sum-aggregation GNN).
In a dense liquid every atom has ~30-40 neighbours inside the cutoff and neighbours at
similar distances give embedding features of the same sign, so T is a coherent sum and D,
quadratic in it, is O(10-100) instead of O(0.1).  The first tanh of the fitting network
(DeePMD's default activation) then receives pre-activations of ~10 on average: about half
the units return exactly +-1 in float32 (|x| > ~9 gives 1 - tanh^2 == 0) and the rest sit
deep in the flat tail, every frame producing nearly the same saturated pattern.  Almost no
gradient reaches fit.0 or the embedding net, the predicted energy hardly depends on the
configuration, and the loss stays at the target variance for the whole run.

ORIGIN = "fit.1": the first tanh of the fitting net is the unit that saturates; its
output is the first activation that stops carrying information (the embedding-net tanhs
see O(1) inputs and are fine).

Fix: restore the 1/N_c normalisation of the neighbour sum (N_c = expected neighbour count
inside rc), so the fitting-net pre-activations are O(1).  Same data, init and optimiser.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "fit.1"
SOURCE = ("DeePMD-kit se_e2_a descriptor definition (Zhang et al. 2018, 'End-to-end symmetry "
          "preserving inter-atomic potential energy model', tanh embedding and fitting nets with the 1/N_c "
          "factor); common re-implementation mistake of sum-aggregating neighbour features into a tanh MLP")


class SeA(nn.Module):
    """DeePMD se_e2_a: D_i = (1/N_c^2) (G^T R~)(R~^T G<), G = embedding net of s(r_ij)."""
    def __init__(self, M1, M2, rc, rcs, n_c):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(1, M1), nn.Tanh(), nn.Linear(M1, M1), nn.Tanh())
        self.M2 = M2
        self.rc, self.rcs, self.n_c = rc, rcs, n_c

    def forward(self, d, dv, mask):
        # smooth switching s(r) = 1/r * sw(r), zero beyond rc
        x = ((d - self.rcs) / (self.rc - self.rcs)).clamp(0.0, 1.0)
        sw = x ** 3 * (-6 * x ** 2 + 15 * x - 10) + 1
        s = sw / d.clamp_min(1e-3) * mask                    # [B, N, N]
        R = torch.cat([s[..., None], s[..., None] * dv / d.clamp_min(1e-3)[..., None]], -1)   # [B, N, N, 4]
        G = self.embed(s[..., None]) * mask[..., None]       # [B, N, N, M1]
        T = torch.einsum("bijm,bijk->bimk", G, R)            # [B, N, M1, 4]  (neighbour sum)
        if self.n_c is not None:
            T = T / self.n_c
        D = torch.einsum("bimk,bink->bimn", T, T[:, :, : self.M2])   # [B, N, M1, M2]
        return D.flatten(2)


class DeepPot(nn.Module):
    def __init__(self, M1, M2, H, rc, n_c):
        super().__init__()
        self.descriptor = SeA(M1, M2, rc, rc - 0.5, n_c)
        self.fit = nn.Sequential(nn.Linear(M1 * M2, H), nn.Tanh(), nn.Linear(H, H), nn.Tanh(), nn.Linear(H, 1))
        nn.init.zeros_(self.fit[4].weight)
        nn.init.zeros_(self.fit[4].bias)

    def forward(self, pos, box):
        B, N, _ = pos.shape
        dv = pos[:, :, None, :] - pos[:, None, :, :]
        dv = dv - box[:, None, None, None] * torch.round(dv / box[:, None, None, None])   # minimum image
        d = (dv.pow(2).sum(-1) + 1e-12).sqrt()
        mask = (1.0 - torch.eye(N))[None]
        D = self.descriptor(d, dv, mask)
        return self.fit(D).squeeze(-1).sum(1)                # total energy


def lj_energy(pos, box, rc):
    N = pos.shape[0]
    dv = pos[:, None, :] - pos[None, :, :]
    dv = dv - box * torch.round(dv / box)
    d = (dv.pow(2).sum(-1)).sqrt() + torch.eye(N) * 100
    sr6 = (1.0 / d) ** 6
    src6 = (1.0 / rc) ** 6
    e = 4 * (sr6 ** 2 - sr6) - 4 * (src6 ** 2 - src6)
    e = torch.where(d < rc, e, torch.zeros_like(e))
    return 0.5 * e.sum()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(777 + seed)
    n_side = 4                              # 64 atoms per frame
    N = n_side ** 3
    rho0 = [0.80, 0.85, 0.90][seed % 3]
    rc = [2.0, 2.1, 2.0][seed % 3]
    M1 = [16, 12, 16, 20][seed % 4]
    M2 = 4
    H = [32, 24, 32][seed % 3]
    bs = [16, 12, 16, 20][seed % 4]
    steps = 120 + 20 * (seed % 3)
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]

    frames = []
    for _ in range(steps * bs):
        rho = rho0 * (1.0 + 0.12 * (2 * float(torch.rand(1, generator=g)) - 1))
        L = (N / rho) ** (1.0 / 3.0)
        a = L / n_side
        grid = torch.stack(torch.meshgrid(*[torch.arange(n_side, dtype=torch.float32)] * 3, indexing="ij"), -1).reshape(-1, 3)
        pos = (grid + 0.5) * a + 0.04 * torch.randn(N, 3, generator=g)
        pos = pos % L
        frames.append((pos, L, lj_energy(pos, torch.tensor(L), rc).item()))
    E = torch.tensor([f[2] for f in frames])
    mu, sd = E.mean(), E.std()
    batches = []
    for s in range(steps):
        fr = frames[s * bs:(s + 1) * bs]
        pos = torch.stack([f[0] for f in fr])
        box = torch.tensor([f[1] for f in fr])
        y = (torch.tensor([f[2] for f in fr]) - mu) / sd
        batches.append(((pos, box), y))

    # expected neighbour count inside rc (DeePMD's N_c normalisation)
    n_c = 4.0 / 3.0 * math.pi * rc ** 3 * rho0
    model = DeepPot(M1, M2, H, rc, n_c if fixed else None)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
