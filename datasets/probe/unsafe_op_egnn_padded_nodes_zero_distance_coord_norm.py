"""E(n)-equivariant GNN (Satorras et al. 2021) predicting particle positions of small spring systems
after a time step. Systems have 3-6 particles and are padded to 6 with node/edge masks, as in the EGNN
QM9 code; padded nodes sit at the origin. The coordinate update normalises the edge vector with
coord_diff / sqrt(radial) (the reference code adds epsilon and detaches). While every batch holds only
5-6-particle systems this is calm; the first batch containing a system with >= 2 padded nodes has a
padded-padded edge with radial = 0, giving 0/0 = NaN, which the mask multiply (NaN * 0) cannot remove.
fixed=True: norm = sqrt(radial + 1e-8) (an epsilon, as the reference E_GCL has), nothing else.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "layers.0"
SOURCE = ("vgsatorras/egnn E_GCL.coord2radial (norm = sqrt(radial).detach() + epsilon) re-implemented "
          "without epsilon; padded fully-connected batches with node_mask/edge_mask as in the EGNN QM9 code; "
          "'NaN when batch contains padded nodes' reports for egnn re-implementations")

N_MAX = 6


def _edges(n):
    rows, cols = [], []
    for i in range(n):
        for j in range(n):
            if i != j:
                rows.append(i)
                cols.append(j)
    return torch.tensor(rows), torch.tensor(cols)


class EGCL(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.edge_mlp = nn.Sequential(nn.Linear(2 * hidden + 1, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.node_mlp = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        last = nn.Linear(hidden, 1, bias=False)
        nn.init.xavier_uniform_(last.weight, gain=0.001)
        self.coord_mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), last)

    def coord2radial(self, x, row, col):
        coord_diff = x[:, row] - x[:, col]
        radial = (coord_diff ** 2).sum(-1, keepdim=True)
        norm = torch.sqrt(radial + self.eps)
        return radial, coord_diff / norm

    def forward(self, h, x, row, col, node_mask, edge_mask):
        # h: [B, N, F], x: [B, N, 3], edges (row, col) of the padded fully connected graph without self loops
        radial, coord_diff = self.coord2radial(x, row, col)
        m = self.edge_mlp(torch.cat([h[:, row], h[:, col], radial], dim=-1)) * edge_mask
        trans = coord_diff * self.coord_mlp(m) * edge_mask
        n_nodes = x.shape[1]
        agg_x = torch.zeros_like(x).index_add(1, row, trans)
        x = x + agg_x / (n_nodes - 1)
        agg_h = torch.zeros_like(h).index_add(1, row, m)
        h = h + self.node_mlp(torch.cat([h, agg_h], dim=-1))
        return h * node_mask, x * node_mask


class EGNN(nn.Module):
    def __init__(self, hidden=32, n_layers=4, eps=0.0):
        super().__init__()
        self.embed = nn.Linear(2, hidden)
        self.layers = nn.ModuleList([EGCL(hidden, eps) for _ in range(n_layers)])
        row, col = _edges(N_MAX)
        self.register_buffer("row", row)
        self.register_buffer("col", col)

    def forward(self, feats, x, vel, node_mask):
        edge_mask = node_mask[:, self.row] * node_mask[:, self.col]
        h = self.embed(feats) * node_mask
        for layer in self.layers:
            h, x = layer(h, x, self.row, self.col, node_mask, edge_mask)
        return x


def _simulate(pos, vel, n, g, dt=0.5, k=1.0, sub=20):
    # all-pairs springs of rest length 1 among the n real particles; leapfrog for dt
    p, v = pos[:n].clone(), vel[:n].clone()
    h = dt / sub
    for _ in range(sub):
        d = p[:, None, :] - p[None, :, :]
        r = d.norm(dim=-1, keepdim=True) + torch.eye(n).unsqueeze(-1)
        f = (-k * (r - 1.0) * d / r).sum(1)
        v = v + h * f
        p = p + h * v
    return p


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = EGNN(eps=1e-8 if fixed else 0.0)
    steps, B = 150, 16
    # the first 40% of the dataset shards hold 5-6 particle systems; later shards mix in 3-4 particle ones
    batches = []
    for step in range(steps):
        feats = torch.zeros(B, N_MAX, 2)
        pos = torch.zeros(B, N_MAX, 3)
        vel = torch.zeros(B, N_MAX, 3)
        mask = torch.zeros(B, N_MAX, 1)
        target = torch.zeros(B, N_MAX, 3)
        small_p = 0.0 if step < 0.4 * steps else 0.06
        for b in range(B):
            n = int(torch.randint(5, 7, (1,), generator=g))
            if torch.rand(1, generator=g).item() < small_p:
                n = int(torch.randint(3, 5, (1,), generator=g))
            p0 = torch.randn(n, 3, generator=g)
            v0 = 0.5 * torch.randn(n, 3, generator=g)
            pos[b, :n], vel[b, :n], mask[b, :n] = p0, v0, 1.0
            feats[b, :n, 0] = v0.norm(dim=-1)
            feats[b, :n, 1] = 1.0
            target[b, :n] = _simulate(p0, v0, n, g)
        batches.append(((feats, pos, vel, mask), (target, mask)))

    def loss_fn(out, y):
        target, mask = y
        err = ((out - target) ** 2) * mask
        return err.sum() / (3 * mask.sum())

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
