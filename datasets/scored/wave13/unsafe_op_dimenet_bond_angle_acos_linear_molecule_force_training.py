"""DimeNet-style directional message passing network (radial basis on bond
lengths, angular basis on bond angles, triplet interactions k->j->i) trained
on energies *and* forces (F = -dE/dpos via autograd, create_graph=True), the
usual MD17 / QM-dataset recipe.

Mechanism: the bond angle is computed as
``torch.acos(cos.clamp(-1, 1))`` with cos = <r_ji, r_jk> / (|r_ji| |r_jk|).
For ordinary bent geometries this is fine and training is calm.  When a
linear molecule (CO2 / HCN / acetylene-like, atoms exactly collinear) is in the
batch, cos is exactly -1 and d acos / d cos = -1 / sqrt(1 - cos^2) = -inf.
The force computation differentiates the energy through the angle, so the
forces of that molecule are NaN (inf * 0 in the chain rule), and the loss --
which includes the force error -- is NaN at that step.

ORIGIN: ``angles`` -- the module that evaluates acos on the bond-angle cosine
and produces the first non-finite value (in the force pass).

Fix: clamp the cosine strictly inside (-1, 1) (eps = 1e-6) before acos, as
DimeNet-style codes do (or use atan2(|a x b|, a . b)); data unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "angles"
SOURCE = ("DimeNet / DimeNet++ (Gasteiger et al., 2020) angle computation; PyG and schnetpack issues "
          "'NaN forces for linear molecules' caused by acos at cos = +-1 (fixed with atan2 or an "
          "epsilon clamp)")


class BondAngles(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, pos, trip_i, trip_j, trip_k):
        a = pos[trip_i] - pos[trip_j]
        b = pos[trip_k] - pos[trip_j]
        cos = (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))
        return torch.acos(cos.clamp(-1 + self.eps, 1 - self.eps))


class RBF(nn.Module):
    def __init__(self, n, cutoff):
        super().__init__()
        self.register_buffer("freq", torch.arange(1, n + 1).float() * math.pi / cutoff)
        self.cutoff = cutoff

    def forward(self, d):
        env = 0.5 * (torch.cos(math.pi * d / self.cutoff) + 1)
        return torch.sin(self.freq * d[:, None]) / d[:, None] * env[:, None]


class DimeNetLike(nn.Module):
    def __init__(self, hidden, n_rbf, n_ang, n_blocks, eps):
        super().__init__()
        self.n_ang = n_ang
        self.embed = nn.Embedding(4, hidden)
        self.rbf = RBF(n_rbf, 3.0)
        self.angles = BondAngles(eps)
        self.edge_init = nn.Sequential(nn.Linear(2 * hidden + n_rbf, hidden), nn.SiLU())
        self.sbf_proj = nn.ModuleList([nn.Linear(n_rbf * n_ang, hidden) for _ in range(n_blocks)])
        self.msg = nn.ModuleList([nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU()) for _ in range(n_blocks)])
        self.update = nn.ModuleList([nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(),
                                                   nn.Linear(hidden, hidden)) for _ in range(n_blocks)])
        self.out = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def energy(self, z, pos, src, dst, t_kj, t_ji, mol, n_mol):
        d = (pos[dst] - pos[src]).norm(dim=-1)
        rbf = self.rbf(d)
        h = self.embed(z)
        m = self.edge_init(torch.cat([h[src], h[dst], rbf], dim=-1))  # message on edge j->i
        # triplet k->j->i: edge t_kj (k->j) feeds edge t_ji (j->i); angle at j between i and k
        ang = self.angles(pos, dst[t_ji], src[t_ji], src[t_kj])
        l = torch.arange(self.n_ang, dtype=pos.dtype)
        abasis = torch.cos(l * ang[:, None])
        sbf = (rbf[t_kj][:, :, None] * abasis[:, None, :]).flatten(1)
        for proj, msg, upd in zip(self.sbf_proj, self.msg, self.update):
            tri = msg(m)[t_kj] * proj(sbf)
            agg = torch.zeros_like(m).index_add_(0, t_ji, tri)
            m = m + upd(torch.cat([m, agg], dim=-1))
        atom = torch.zeros(pos.size(0), m.size(1), dtype=m.dtype).index_add_(0, dst, m)
        e_atom = self.out(atom).squeeze(-1)
        return torch.zeros(n_mol, dtype=pos.dtype).index_add_(0, mol, e_atom)

    def forward(self, z, pos, src, dst, t_kj, t_ji, mol, n_mol):
        pos = pos.clone().requires_grad_(True)
        e = self.energy(z, pos, src, dst, t_kj, t_ji, mol, n_mol)
        forces = -torch.autograd.grad(e.sum(), pos, create_graph=True)[0]
        return e, forces


def random_molecule(n_atoms, g, linear=False):
    if linear:  # O=C=O / H-C#C-H style: exactly collinear along x
        n_atoms = 3 if n_atoms < 4 else 4
        bl = 1.16 if n_atoms == 3 else 1.2
        pos = torch.tensor([[i * bl, 0.0, 0.0] for i in range(n_atoms)])
        z = torch.tensor([2, 1, 2] if n_atoms == 3 else [0, 1, 1, 0])
        return z, pos
    pos = [torch.zeros(3)]
    for i in range(1, n_atoms):
        parent = pos[int(torch.randint(0, i, (1,), generator=g))]
        for _ in range(20):
            v = torch.randn(3, generator=g); v = v / v.norm()
            p = parent + v * (1.1 + 0.4 * torch.rand(1, generator=g))
            if (torch.stack(pos) - p).norm(dim=1).min() > 1.0:
                break
        pos.append(p)
    z = torch.randint(0, 4, (n_atoms,), generator=g)
    return z, torch.stack(pos)


def reference_energy(z, pos, src, dst, t_kj, t_ji):
    d = (pos[dst] - pos[src]).norm(dim=-1)
    d0 = 1.1 + 0.1 * (z[src] + z[dst]).float()
    e_bond = 0.5 * (20.0 * (d - d0) ** 2).sum()
    a = pos[dst[t_ji]] - pos[src[t_ji]]
    b = pos[src[t_kj]] - pos[src[t_ji]]
    cos = (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))
    e_ang = 0.5 * (3.0 * (cos + 0.33) ** 2).sum()
    return e_bond + e_ang + 0.3 * z.float().sum()


def graph_of(pos, cutoff=1.7):
    dist = torch.cdist(pos, pos)
    adj = (dist < cutoff) & ~torch.eye(pos.size(0), dtype=torch.bool)
    src, dst = adj.nonzero(as_tuple=True)
    t_kj, t_ji = [], []
    for e_ji in range(src.numel()):
        j, i = int(src[e_ji]), int(dst[e_ji])
        for e_kj in (dst == j).nonzero(as_tuple=True)[0].tolist():
            if int(src[e_kj]) != i:
                t_kj.append(e_kj); t_ji.append(e_ji)
    return src, dst, torch.tensor(t_kj, dtype=torch.long), torch.tensor(t_ji, dtype=torch.long)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(hidden=32, n_rbf=6, n_ang=4, blocks=2, bs=6, lr=1e-3, bad_step=41, atoms=(5, 9)),
        dict(hidden=48, n_rbf=8, n_ang=5, blocks=1, bs=4, lr=7e-4, bad_step=67, atoms=(4, 8)),
        dict(hidden=24, n_rbf=6, n_ang=3, blocks=3, bs=8, lr=1.5e-3, bad_step=23, atoms=(5, 8)),
    ][seed % 3]
    g = torch.Generator().manual_seed(17000 + seed)
    steps = 90
    batches = []
    for step in range(steps):
        zs, poss, es, fs = [], [], [], []
        for m in range(cfg["bs"]):
            n = int(torch.randint(cfg["atoms"][0], cfg["atoms"][1] + 1, (1,), generator=g))
            # the dataset contains a few linear molecules; the first one shows up at bad_step
            z, pos = random_molecule(n, g, linear=(step == cfg["bad_step"] and m == 0))
            p = pos.clone().requires_grad_(True)
            e = reference_energy(z, p, *graph_of(pos))
            f = -torch.autograd.grad(e, p)[0]
            zs.append(z); poss.append(pos); es.append(e.detach()); fs.append(f)
        # collate into one disjoint graph
        offs = torch.tensor([0] + [p.size(0) for p in poss]).cumsum(0)
        src, dst, t_kj, t_ji, mol = [], [], [], [], []
        e_off = 0
        for k, p in enumerate(poss):
            s, d_, tk, tj = graph_of(p)
            src.append(s + offs[k]); dst.append(d_ + offs[k])
            t_kj.append(tk + e_off); t_ji.append(tj + e_off)
            e_off += s.numel()
            mol.append(torch.full((p.size(0),), k))
        x = (torch.cat(zs), torch.cat(poss), torch.cat(src), torch.cat(dst), torch.cat(t_kj),
             torch.cat(t_ji), torch.cat(mol), len(poss))
        batches.append((x, (torch.stack(es), torch.cat(fs))))

    torch.manual_seed(seed)
    model = DimeNetLike(cfg["hidden"], cfg["n_rbf"], cfg["n_ang"], cfg["blocks"], eps=1e-6 if fixed else 0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def loss_fn(out, target):
        e, f = out
        e_t, f_t = target
        return F.mse_loss(e, e_t) / 25.0 + 10.0 * F.mse_loss(f, f_t) / 25.0

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
