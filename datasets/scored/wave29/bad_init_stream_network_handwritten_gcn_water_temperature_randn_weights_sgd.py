"""Stream-temperature GCN on a river network, hand-written layers initialised with torch.randn.

Mechanism: a practitioner writes a Kipf-style graph convolution by hand for a network of stream
gauges (nodes are monitoring stations, edges follow the flow network) to predict daily water
temperature from air temperature, discharge, shade and seasonality. The layer's weight is created
as ``nn.Parameter(torch.randn(fin, fout))`` -- unit-variance entries instead of Glorot's
~1/sqrt(fan).  With ReLU between layers every layer multiplies the activation scale by roughly
sqrt(fan_in / 2) (about 4-6 here), so at step 0 the prediction is already tens to hundreds of
standard deviations off, and the factor grows geometrically with depth.  The first SGD step on that MSE is enormous, the weights jump
and the loss overflows to inf/NaN within a few steps.

ORIGIN: ``layers.0`` -- the first hand-written graph convolution is where the activation scale
first leaves O(1); every later layer only compounds it.

Fix: initialise the weights as the reference GCN code does (``glorot`` / xavier_uniform), nothing
else changes (same graph, data, depth, learning rate and steps).
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Hand-written GCN layers using torch.randn for weights (common in GNN tutorials and "
          "student re-implementations) versus Kipf & Welling's pygcn glorot init; stream "
          "temperature GNNs as in Jia et al. 2021 'Physics-guided recurrent graph model' (Delaware "
          "River Basin).")


def _river_tree(n, g):
    # random dendritic network: node i drains into a lower-numbered node (outlet = 0)
    parent = [-1] + [int(torch.randint(max(0, i - 4), i, (1,), generator=g)) for i in range(1, n)]
    a = torch.eye(n)
    for i in range(1, n):
        a[i, parent[i]] = 1.0
        a[parent[i], i] = 1.0
    d = a.sum(1).rsqrt()
    return d[:, None] * a * d[None, :], parent


class GraphConv(nn.Module):
    def __init__(self, a_hat, fin, fout, fixed):
        super().__init__()
        self.register_buffer("a_hat", a_hat)
        self.weight = nn.Parameter(torch.empty(fin, fout))
        self.bias = nn.Parameter(torch.zeros(fout))
        if fixed:
            nn.init.xavier_uniform_(self.weight)
        else:
            with torch.no_grad():
                self.weight.copy_(torch.randn(fin, fout))

    def forward(self, h):  # h: (days, nodes, fin)
        return self.a_hat @ (h @ self.weight) + self.bias


class StreamTempGCN(nn.Module):
    def __init__(self, a_hat, fin, hidden, depth, fixed):
        super().__init__()
        dims = [fin] + [hidden] * depth
        self.layers = nn.ModuleList(GraphConv(a_hat, dims[i], dims[i + 1], fixed) for i in range(depth))
        self.act = nn.ReLU()
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = x
        for layer in self.layers:
            h = self.act(layer(h))
        return self.out(h).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    torch.manual_seed(seed)
    n_nodes = [24, 30, 36][seed % 3]
    depth = [3, 4, 5][seed % 3]
    hidden = [48, 64, 40][seed % 3]
    batch_days = [16, 12, 20][seed % 3]
    lr = [0.03, 0.02, 0.025][seed % 3]
    steps = 150
    a_hat, parent = _river_tree(n_nodes, g)

    # per-node static attributes: elevation, riparian shade, upstream area (standardised)
    static = torch.randn(n_nodes, 3, generator=g)
    total = steps * batch_days
    doy = torch.arange(total).float() % 365
    air = 12 + 10 * torch.sin(2 * torch.pi * (doy - 110) / 365)
    air = air[:, None] + 3 * torch.randn(total, n_nodes, generator=g)
    q = torch.randn(total, n_nodes, generator=g)  # log discharge anomaly
    # water temp: damped air temp, cooler with shade/elevation, buffered by discharge,
    # plus mixing from upstream neighbours
    wt = 0.7 * air - 1.5 * static[:, 0] - 1.0 * static[:, 1] - 0.8 * q * (air - 12) / 10 + 3
    wt = wt + 0.3 * torch.randn(total, n_nodes, generator=g)
    wt_mix = wt.clone()
    for i in range(n_nodes - 1, 0, -1):
        wt_mix[:, parent[i]] = 0.8 * wt_mix[:, parent[i]] + 0.2 * wt_mix[:, i]
    feats = torch.stack([
        (air - 12) / 8, q,
        torch.sin(2 * torch.pi * doy / 365)[:, None].expand(total, n_nodes),
        torch.cos(2 * torch.pi * doy / 365)[:, None].expand(total, n_nodes),
    ], -1)
    feats = torch.cat([feats, static[None].expand(total, n_nodes, 3)], -1)
    y = (wt_mix - wt_mix.mean()) / wt_mix.std()

    model = StreamTempGCN(a_hat, feats.shape[-1], hidden, depth, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    perm = torch.randperm(total, generator=g)  # shuffled days, as a DataLoader would
    feats, y = feats[perm], y[perm]
    batches = [(feats[i * batch_days:(i + 1) * batch_days], y[i * batch_days:(i + 1) * batch_days])
               for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
