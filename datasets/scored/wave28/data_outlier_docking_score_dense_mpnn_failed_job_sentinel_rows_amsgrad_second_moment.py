"""Hand-written message-passing network (dense adjacency, SiLU sum-of-neighbours updates
as in EGNN/PaiNN-style codes, sum readout) that regresses AutoDock-Vina style docking
scores (kcal/mol, about -12 to -4) from small-molecule graphs; MSE loss, Adam with
AMSGrad (the DimeNet training recipe), output bias initialised at the median score.

Mechanism (data_outlier): the score table was produced by a batch docking pipeline that
writes a sentinel of +10000 for ligands whose docking job failed (no pose / timeout), and
those rows were not filtered; the jobs of one failed compute node sit together, so one early
batch (its position varies with the seed) holds a quarter of such rows. Their squared error
is ~1e8, so that single gradient is ~1e4 times the normal one. Adam's step stays bounded
(about lr), so nothing becomes non-finite, but the second moment absorbs g_outlier^2 and
AMSGrad keeps the running maximum of it for the rest of the run: the effective step size of
every parameter collapses, while the first moment drifts the weights toward the sentinel for
a few dozen steps. The loss stops improving (it ends no better than at the start) while the
clean run learns.

ORIGIN: None - the problem is in the data rows; the first module they reach, `embed`, is
not where anything goes wrong, and the damage is done inside the optimizer state of all
parameters at once.

Fix: drop rows with the failure sentinel (score > 0 kcal/mol is physically meaningless for
a docked pose) from that batch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Failed docking jobs recorded with a sentinel score (e.g. 10000 / 9999) in "
          "virtual-screening tables, which must be filtered before training surrogate "
          "models (cf. DOCKSTRING, Garcia-Ortegon et al. 2022, removal of failed ligands); "
          "AMSGrad max second moment pollution by a single huge gradient (Reddi et al. 2018; "
          "used in the DimeNet recipe)")

N_ATOM_TYPES = 6   # C N O S F Cl


class DenseMPNN(nn.Module):
    def __init__(self, hid, n_layers):
        super().__init__()
        self.embed = nn.Linear(N_ATOM_TYPES + 1, hid)
        self.msg = nn.ModuleList([nn.Linear(hid, hid) for _ in range(n_layers)])
        self.upd = nn.ModuleList([nn.Linear(2 * hid, hid) for _ in range(n_layers)])
        self.readout = nn.Sequential(nn.Linear(hid, hid), nn.SiLU(), nn.Linear(hid, 1))

    def forward(self, x, adj, mask):
        h = F.silu(self.embed(x))
        for m, u in zip(self.msg, self.upd):
            agg = adj @ F.silu(m(h))
            h = F.silu(u(torch.cat([h, agg], -1))) * mask.unsqueeze(-1)
        g = h.sum(1) / 10.0
        return self.readout(g).squeeze(-1)


def _graphs(gen, n, max_atoms):
    n_at = torch.randint(8, max_atoms + 1, (n,), generator=gen)
    types = torch.multinomial(torch.tensor([0.6, 0.12, 0.14, 0.05, 0.05, 0.04]),
                              n * max_atoms, replacement=True, generator=gen).view(n, max_atoms)
    mask = (torch.arange(max_atoms)[None] < n_at[:, None]).float()
    adj = torch.zeros(n, max_atoms, max_atoms)
    for i in range(n):
        k = int(n_at[i])
        for a in range(1, k):                      # spanning tree + a few ring closures
            b = int(torch.randint(0, a, (1,), generator=gen))
            adj[i, a, b] = adj[i, b, a] = 1.0
        for _ in range(int(torch.randint(0, 3, (1,), generator=gen))):
            a, b = torch.randint(0, k, (2,), generator=gen).tolist()
            if a != b:
                adj[i, a, b] = adj[i, b, a] = 1.0
    oh = F.one_hot(types, N_ATOM_TYPES).float() * mask.unsqueeze(-1)
    deg = adj.sum(-1, keepdim=True) / 4.0
    x = torch.cat([oh, deg], -1)
    # "docking score": size, polar atoms and aromatic-like ring closures help binding
    n_polar = (oh[..., 1] + oh[..., 2]).sum(1)
    n_halo = (oh[..., 4] + oh[..., 5]).sum(1)
    cyc = adj.sum((1, 2)) / 2 - (n_at - 1).float()
    score = -3.0 - 0.22 * n_at.float() - 0.35 * n_polar + 0.25 * (n_polar - 4).clamp(min=0) ** 1.5 \
            - 0.4 * n_halo - 0.6 * cyc
    score = score + 0.3 * torch.randn(n, generator=gen)
    return x, adj, mask, score


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(4000 + seed)
    hid = [64, 96, 48][seed % 3]
    n_layers = [3, 2, 4][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [1e-3, 1.5e-3, 1.2e-3][seed % 3]
    bad_step = [6, 9, 12][seed % 3]
    steps = 220
    max_atoms = 24

    model = DenseMPNN(hid, n_layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr, amsgrad=True)   # DimeNet-style AMSGrad

    def loss_fn(out, y):
        return F.mse_loss(out, y)

    x, adj, mask, y = _graphs(gen, bs * steps, max_atoms)
    # "init well": output bias at the median training score (robust to the sentinels)
    with torch.no_grad():
        model.readout[2].bias.fill_(float(y.median()))
    batches = []
    for s in range(steps):
        sl = slice(s * bs, (s + 1) * bs)
        xb, ab, mb, yb = x[sl], adj[sl], mask[sl], y[sl].clone()
        if s == bad_step:
            rows = torch.randperm(bs, generator=gen)[:bs // 4 + seed % 3]   # one failed node's chunk
            yb[rows] = 10000.0                      # failed-docking sentinel
            if fixed:
                keep = yb < 0.0
                xb, ab, mb, yb = xb[keep], ab[keep], mb[keep], yb[keep]
        batches.append(((xb, ab, mb), yb))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
