"""ANI-style neural network potential (Smith et al. 2017; Behler-Parrinello
decomposition): every atom is described by radial symmetry functions of its
neighbours (per neighbour element), an element-specific MLP (H, C, O) maps the
descriptor to an atomic energy and the molecular energy is their sum.  Trained
with MSE on per-molecule energies (referenced and scaled to ~unit variance)
and Adam.

Mechanism: three conformers in one early batch come from DFT jobs whose SCF
did not converge; the parser wrote a garbage energy (~1e5 in the scaled units)
into their labels.  That single batch produces a gradient ~1e5 times the
normal one.  Adam's first moment then keeps pushing every atomic network
towards the absurd label for tens of steps, and its second moment (beta2 =
0.999) stays ~1e10 times too large for the rest of the run, so the normal
gradients produce updates ~1e-5 of the usual size: the potential is frozen at
a worse energy than at initialisation and the loss never comes down again.

ORIGIN is None: the failure comes from one corrupt label, not from a module.

Fix: filter the garbage labels (the rows keep their properly converged
reference energies); the batch is otherwise identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("ANI / Behler-Parrinello potentials trained on DFT data sets containing "
          "unconverged-SCF conformers; Adam second-moment poisoning by a single huge-loss batch")

ELEMENTS = ["H", "C", "O"]


def radial_aev(pos, species, rs, eta=4.0, rc=5.0):
    """pos (A,3), species (A,) -> (A, n_elem * len(rs)) radial symmetry functions."""
    d = torch.cdist(pos, pos)
    fc = 0.5 * torch.cos(torch.pi * d / rc) + 0.5
    fc = fc * (d < rc) * (d > 0)
    g = torch.exp(-eta * (d.unsqueeze(-1) - rs) ** 2) * fc.unsqueeze(-1)  # (A, A, R)
    out = []
    for e in range(len(ELEMENTS)):
        out.append((g * (species == e).float().view(1, -1, 1)).sum(1))
    return torch.cat(out, dim=1)


class ANIPotential(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        nets = {}
        for el in ELEMENTS:
            layers, prev = [], d_in
            for h in hidden:
                layers += [nn.Linear(prev, h), nn.CELU(alpha=0.1)]
                prev = h
            layers.append(nn.Linear(prev, 1))
            nets[el] = nn.Sequential(*layers)
        self.atomic = nn.ModuleDict(nets)

    def forward(self, aev, species):        # aev (B, A, D), species (B, A), -1 = padding
        energy = torch.zeros(aev.shape[0])
        for e, el in enumerate(ELEMENTS):
            mask = species == e
            if mask.any():
                ea = self.atomic[el](aev[mask]).squeeze(-1)
                energy = energy.index_add(0, mask.nonzero()[:, 0], ea)
        return energy


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(hidden=[64, 32], bs=16, lr=1e-3, steps=120, bad_step=3, max_atoms=10),
        dict(hidden=[48, 48, 24], bs=24, lr=5e-4, steps=100, bad_step=8, max_atoms=12),
        dict(hidden=[32], bs=12, lr=2e-3, steps=140, bad_step=5, max_atoms=8),
    ][seed % 3]
    g = torch.Generator().manual_seed(90 + seed)
    rs = torch.linspace(0.8, 4.5, 8)
    n_mol, A = 600, cfg["max_atoms"]
    aevs = torch.zeros(n_mol, A, 3 * len(rs))
    species = torch.full((n_mol, A), -1, dtype=torch.long)
    for i in range(n_mol):
        na = int(torch.randint(4, A + 1, (1,), generator=g))
        sp = torch.multinomial(torch.tensor([0.5, 0.35, 0.15]), na, replacement=True, generator=g)
        pos = torch.randn(na, 3, generator=g) * 1.3
        species[i, :na] = sp
        aevs[i, :na] = radial_aev(pos, sp, rs)
    # reference energies from a random "teacher" potential, scaled to unit variance
    torch.manual_seed(10_000 + seed)
    teacher = ANIPotential(3 * len(rs), [32])
    with torch.no_grad():
        e_ref = teacher(aevs, species) * 3.0
        e_ref = (e_ref - e_ref.mean()) / e_ref.std()

    torch.manual_seed(seed)
    model = ANIPotential(3 * len(rs), cfg["hidden"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loss_fn = nn.MSELoss()

    batches = []
    for step in range(cfg["steps"]):
        idx = torch.randint(0, n_mol, (cfg["bs"],), generator=g)
        y = e_ref[idx].clone()
        if step == cfg["bad_step"] and not fixed:
            y[:3] = 1.0e5                               # unconverged SCF jobs: garbage labels
        batches.append(((aevs[idx], species[idx]), y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
