"""Graph-level energy regression for frames of a Morse-potential particle simulation: each frame
is turned into a radius graph (cutoff 1.6 sigma, no self-loops) and fed to a two-layer GCN whose
layers compute the symmetric normalisation D^-1/2 A D^-1/2 themselves with deg.pow(-0.5). Most
frames are dense and every particle has neighbours within the cutoff, so training starts calmly;
but now and then a frame contains a particle with no neighbour inside the cutoff (a vacancy
cluster around it, and from step 40 on one evaporated particle per batch). Its degree is 0,
deg.pow(-0.5) is inf, and inf * 0 (its empty adjacency row) is NaN, which the aggregation spreads
over the whole graph: the loss is NaN at that step and the NaN gradients poison every weight.
The fixed run only guards the op (deg.clamp_min(1) before the power, like PyG's gcn_norm masking
the inf); nothing else changes."""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "convs.0"
SOURCE = ("Hand-written GCN normalisation with isolated nodes: deg^-1/2 = inf -> NaN (PyG gcn_norm "
          "masks deg_inv_sqrt == inf; many forum/issue reports of NaN from isolated nodes)")


class GCNLayer(nn.Module):
    def __init__(self, fin, fout, safe):
        super().__init__()
        self.lin = nn.Linear(fin, fout)
        self.safe = safe

    def forward(self, h, adj):
        deg = adj.sum(-1)
        if self.safe:
            deg = deg.clamp_min(1.0)
        dinv = deg.pow(-0.5)
        norm_adj = dinv[..., :, None] * adj * dinv[..., None, :]
        return norm_adj @ self.lin(h)


class EnergyGCN(nn.Module):
    def __init__(self, fin, hidden, safe):
        super().__init__()
        self.convs = nn.ModuleList([GCNLayer(fin, hidden, safe), GCNLayer(hidden, hidden, safe)])
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, feats, adj):
        h = torch.relu(self.convs[0](feats, adj))
        h = h + torch.relu(self.convs[1](h, adj))
        return self.head(h.sum(1)).squeeze(-1)


def _frame(g, n, evaporate):
    # 20 particles on a jittered 3x3x3 lattice (spacing 1.0 sigma): a dense liquid-like frame
    grid = torch.stack(torch.meshgrid(*[torch.arange(3)] * 3, indexing="ij"), -1).reshape(-1, 3).float()
    pos = grid[torch.randperm(len(grid), generator=g)[:n]] + 0.1 * torch.randn(n, 3, generator=g)
    if evaporate:
        pos[0] = pos[0] + torch.tensor([4.0, 4.0, 4.0])
    d = torch.cdist(pos, pos)
    adj = ((d < 1.6) & (d > 0)).float()
    r = d + torch.eye(n) * 10
    morse = (torch.exp(-4 * (r - 1)) - 2 * torch.exp(-2 * (r - 1))) * (r < 2.5).float()
    energy = 0.5 * morse.sum() / n
    feats = torch.cat([adj.sum(-1, keepdim=True) / 6.0, torch.ones(n, 1)], -1)
    return feats, adj, energy


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n, bsz = 20, 16
    batches = []
    for b in range(60):
        fs, adjs, es = [], [], []
        for i in range(bsz):
            f, a, e = _frame(g, n, evaporate=(b >= 40 and i == b % bsz))
            fs.append(f); adjs.append(a); es.append(e)
        batches.append(((torch.stack(fs), torch.stack(adjs)), torch.stack(es)))
    all_e = torch.cat([y for _, y in batches])
    mu, sd = all_e.mean(), all_e.std()
    batches = [(x, (y - mu) / sd) for x, y in batches]
    model = EnergyGCN(2, 32, safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps = 120
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda p, y: ((p - y) ** 2).mean(),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
