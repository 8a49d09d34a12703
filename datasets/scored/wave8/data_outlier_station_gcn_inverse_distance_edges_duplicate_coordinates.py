"""Graph regression over weather-station networks: each sample is a small graph of stations,
edges connect each station to its 4 nearest neighbours with weight 1/distance, and a two-layer
GCN with symmetric degree normalisation D^-1/2 (A+I) D^-1/2 predicts a regional quantity per
graph (SGD with momentum). One network in the stream contains a station that was registered
twice in the metadata (same coordinates, two ids), so its distance to the duplicate is exactly 0
and the edge weight is 1/0 = inf. When that graph's batch arrives (step 40) the weighted degree is
inf, the normalisation produces inf/inf = NaN in the first graph convolution (conv1), and the
loss and all weights become NaN. The fix drops the corrupt graph from its batch; everything
else is identical."""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "conv1"
SOURCE = ("Known pattern: inverse-distance edge weights on sensor/station graphs (e.g. air-quality "
          "and weather GNNs, DCRNN-style distance kernels) blowing up on duplicated station "
          "coordinates (zero distance) -> inf edge weight -> NaN after degree normalisation.")

N, FIN, K = 12, 4, 4


class GCNLayer(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.lin = nn.Linear(fin, fout)

    def forward(self, x, adj):
        a = adj + torch.eye(adj.shape[-1])
        deg = a.sum(-1)
        dinv = deg.pow(-0.5)
        a_hat = dinv.unsqueeze(-1) * a * dinv.unsqueeze(-2)
        return a_hat @ self.lin(x)


class StationGCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GCNLayer(FIN, 32)
        self.conv2 = GCNLayer(32, 32)
        self.act = nn.ReLU()
        self.readout = nn.Linear(32, 1)

    def forward(self, x, adj):
        h = self.act(self.conv1(x, adj))
        h = self.act(self.conv2(h, adj))
        return self.readout(h.mean(1)).squeeze(-1)


def knn_inverse_distance(pos):
    d = torch.cdist(pos, pos)
    n = pos.shape[0]
    d_nodiag = d + torch.diag(torch.full((n,), float("inf")))
    idx = d_nodiag.topk(K, largest=False).indices
    adj = torch.zeros(n, n)
    for i in range(n):
        for j in idx[i].tolist():
            adj[i, j] = 1.0 / d[i, j]
            adj[j, i] = 1.0 / d[i, j]
    return adj / 10.0  # distances in km, weights rescaled to O(1)


def make_graph(g, duplicate=False):
    pos = torch.rand(N, 2, generator=g) * 50.0
    if duplicate:
        pos[5] = pos[2]  # same station entered twice in the metadata
    x = torch.randn(N, FIN, generator=g)
    adj = knn_inverse_distance(pos)
    # target: regional average of a smoothed reading (first feature diffused over the graph)
    a = (adj > 0).float() + torch.eye(N)
    smooth = (a / a.sum(1, keepdim=True)) @ x[:, :2]
    y = smooth[:, 0].mean() * 3.0 + (smooth[:, 1] ** 2).mean() - 0.5
    return x, adj, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = StationGCN()
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    steps, B, bad_step = 120, 16, 40
    pool = [make_graph(g) for _ in range(64)]
    bad = make_graph(g, duplicate=True)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, len(pool), (B,), generator=g).tolist()
        graphs = [pool[i] for i in idx]
        if s == bad_step:
            graphs[3] = bad  # the network with the duplicated station
            if fixed:  # fixed: corrupt graph filtered out of the batch
                graphs = graphs[:3] + graphs[4:]
        x = torch.stack([gr[0] for gr in graphs])
        adj = torch.stack([gr[1] for gr in graphs])
        y = torch.stack([gr[2] for gr in graphs])
        batches.append(((x, adj), y))

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
