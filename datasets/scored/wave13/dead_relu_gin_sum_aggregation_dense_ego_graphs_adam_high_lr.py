"""GIN graph classifier (sum aggregation, mean readout, BatchNorm dropped) on
dense ego-network / Erdos-Renyi graphs with one-hot degree features, trained
with Adam at lr=0.2-0.25 (a value that "worked" for a logistic-regression
baseline on the same features).

Mechanism: the first GIN layer is the only ReLU that sees non-negative inputs
(one-hot degrees, summed over ~10-25 neighbours, so the input vector of every
node has an L1 norm of ~15-25).  Adam moves every weight by ~lr per step, so each
hidden unit of ``convs.0.mlp`` is shifted by ~lr * 20 = 4-5 in the *same*
direction for every node.  Units pushed down go negative for all nodes within a
few steps, units pushed up make the logits explode, flip their gradient and
are then pushed down as well; after 5-10 steps every unit of ``convs.0.mlp.1``
is zero for every node of every graph.  From then on nothing below the head
learns any structure, the prediction is (nearly) the same for every graph and
the loss never gets back below the ln 2 it started from (the head is
zero-initialised, so step 0 is exactly the uniform prediction).

ORIGIN: ``convs.0.mlp.1`` -- the ReLU of the first GIN MLP, which is the first
layer whose units are all dead (deeper ReLUs die later, if at all).

Fix: a learning rate suited to this network (lr / 50), everything else
unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "convs.0.mlp.1"
SOURCE = ("GIN (Xu et al., ICLR 2019) reimplementations without BatchNorm on IMDB/COLLAB-style "
          "degree-feature graphs; PyG forum threads 'GIN outputs the same prediction for every "
          "graph, loss stuck' with too-high Adam learning rates")


class GINConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(d_in, d_out), nn.ReLU(), nn.Linear(d_out, d_out))

    def forward(self, x, adj):
        return self.mlp((1 + self.eps) * x + adj @ x)


class GIN(nn.Module):
    def __init__(self, d_in, hidden, layers, num_classes):
        super().__init__()
        dims = [d_in] + [hidden] * layers
        self.convs = nn.ModuleList([GINConv(dims[i], dims[i + 1]) for i in range(layers)])
        self.head = nn.Linear(hidden, num_classes)
        nn.init.zeros_(self.head.weight)  # start from the uniform prediction
        nn.init.zeros_(self.head.bias)

    def forward(self, x, adj, pool):
        for conv in self.convs:
            x = conv(x, adj)
        return self.head(pool @ x)  # mean readout


def random_graph(cls, n, g):
    if cls == 0:  # Erdos-Renyi
        a = (torch.rand(n, n, generator=g) < 0.55).float()
        a = torch.triu(a, 1)
    else:  # preferential-attachment ego network with hubs
        a = torch.zeros(n, n)
        deg = torch.ones(n)
        for v in range(1, n):
            m = min(v, 9)
            p = deg[:v] / deg[:v].sum()
            nb = torch.multinomial(p, m, replacement=False, generator=g)
            a[nb, v] = 1.0
            deg[nb] += 1; deg[v] += m
    return a + a.t()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(hidden=32, layers=3, bs=16, lr=0.2),
        dict(hidden=48, layers=2, bs=24, lr=0.15),
        dict(hidden=48, layers=3, bs=20, lr=0.25),
    ][seed % 3]
    g = torch.Generator().manual_seed(5000 + seed)
    max_deg, steps = 32, 80
    # small pool of graphs re-sampled into mini-batches
    pool_graphs = []
    for i in range(160):
        cls = i % 2
        n = int(torch.randint(22, 34, (1,), generator=g))
        a = random_graph(cls, n, g)
        deg = a.sum(1).long().clamp(max=max_deg - 1)
        feats = torch.nn.functional.one_hot(deg, max_deg).float()
        pool_graphs.append((a, feats, cls))
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(pool_graphs), (cfg["bs"],), generator=g)
        gs = [pool_graphs[int(i)] for i in idx]
        adj = torch.block_diag(*[a for a, _, _ in gs])
        x = torch.cat([f for _, f, _ in gs])
        pool = torch.block_diag(*[torch.ones(1, a.size(0)) / a.size(0) for a, _, _ in gs])
        y = torch.tensor([c for _, _, c in gs])
        batches.append(((x, adj, pool), y))

    torch.manual_seed(seed)
    model = GIN(max_deg, cfg["hidden"], cfg["layers"], 2)
    lr = cfg["lr"] / 50 if fixed else cfg["lr"]
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
