"""Graph-level regression with a hand-written GraphConv network (h_i' = GELU(W1 h_i + W2 mean_{j
in N(i)} h_j + b), three layers), a mean readout and a Linear-ReLU-Linear head. The graphs are
random geometric / Erdos-Renyi mixtures of 12-19 nodes with node features (1, degree/10), and
the target is the standardised "friendship-paradox gap" (mean neighbour degree minus degree,
averaged over nodes), which needs one round of aggregation. Inputs are a tuple (node features,
edge_index, graph id, graph-count placeholder). Adam's lr was set to 0.1, the value used when
only a linear readout was trained on frozen features. The mean-pooled graph vectors are similar
from graph to graph, so each hidden unit of the head is on or off for almost all graphs at once,
and Adam's ~lr-sized sign steps push them off one after the other; by the end essentially every
ReLU after head.0 is negative for every graph, outputs 0 and passes no gradient, the trunk
receives no gradient either, and the MSE sits at (or above) the target variance for the rest of
the run, with no NaN.
Fixed: Adam with lr=3e-3; architecture and init unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.0"
SOURCE = ("GraphConv (Morris et al. AAAI 2019) with a ReLU MLP readout head; dying ReLU after large "
          "early Adam steps (Lu et al. 2019 'Dying ReLU and initialization'; 'GNN regression predicts "
          "a constant' forum reports)")
D = 32


class GraphConv(nn.Module):
    def __init__(self, din, dout):
        super().__init__()
        self.lin_root = nn.Linear(din, dout)
        self.lin_nbr = nn.Linear(din, dout, bias=False)

    def forward(self, h, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(h).index_add_(0, dst, h[src])
        deg = torch.zeros(h.shape[0]).index_add_(0, dst, torch.ones(dst.shape[0])).clamp_min(1)
        return F.gelu(self.lin_root(h) + self.lin_nbr(agg / deg[:, None]))


class GraphConvRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([GraphConv(2, D), GraphConv(D, D), GraphConv(D, D)])
        self.head = nn.Sequential(nn.Linear(D, D), nn.ReLU(), nn.Linear(D, 1))

    def forward(self, x, edge_index, graph_id, n_graphs):
        h = x
        for layer in self.layers:
            h = layer(h, edge_index)
        n = n_graphs.shape[0]
        pooled = torch.zeros(n, h.shape[1]).index_add_(0, graph_id, h)
        cnt = torch.zeros(n).index_add_(0, graph_id, torch.ones(h.shape[0]))
        return self.head(pooled / cnt[:, None]).squeeze(-1)


def _graph(g):
    n = int(torch.randint(12, 20, (1,), generator=g))
    pos = torch.rand(n, 2, generator=g)
    alpha = float(torch.rand(1, generator=g))
    geo = torch.cdist(pos, pos) < 0.4
    er = torch.rand(n, n, generator=g) < 0.3
    pick = torch.rand(n, n, generator=g) < alpha
    adj = torch.where(pick, geo, er)
    adj = torch.triu(adj, 1); adj = adj | adj.T
    A = adj.float(); deg = A.sum(1)
    nbr_deg = (A @ deg) / deg.clamp_min(1)
    cc = (nbr_deg - deg).mean()  # friendship-paradox gap
    src, dst = adj.nonzero(as_tuple=True)
    x = torch.stack([torch.ones(n), deg / 10], 1)
    return x, torch.stack([src, dst]), cc


def _batch(g, k=32):
    xs, eis, gids, ys, off = [], [], [], [], 0
    for i in range(k):
        x, ei, y = _graph(g); n = x.shape[0]
        xs.append(x); eis.append(ei + off); gids.append(torch.full((n,), i)); ys.append(y); off += n
    return (torch.cat(xs), torch.cat(eis, 1), torch.cat(gids), torch.zeros(k)), torch.stack(ys)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(14000 + seed)
    pool = [_batch(g) for _ in range(25)]
    ys = torch.cat([p[1] for p in pool]); mu, sd = ys.mean(), ys.std()
    pool = [(x, (y - mu) / sd) for x, y in pool]
    steps = 150
    batches = [pool[s % len(pool)] for s in range(steps)]
    model = GraphConvRegressor()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else 0.1)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
