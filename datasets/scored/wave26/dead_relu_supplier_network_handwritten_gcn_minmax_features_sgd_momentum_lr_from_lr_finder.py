"""Supply-network delay-risk regressor: hand-written 2-layer GCN, ReLU, SGD+momentum at lr 0.15-0.2.

Mechanism: each step is one snapshot of a multi-tier supply network (suppliers,
plants, DCs; edges = supply relations). Node features are min-max scaled KPIs, all in
[0, 1] (inventory cover, utilisation, open POs, supplier OTIF, lead time, ...); the
target is the standardised expected delivery delay of each node. The learning rate
was read off an LR-range test at the point where the loss fell fastest, which for
this model sits right at the edge of stability. Because every input is non-negative,
the update of a hidden unit moves all its input weights in the same direction, and
the large, sign-coherent steps (plus momentum) keep driving hidden pre-activations
below zero for every node of every graph. Units that go negative output exactly zero,
receive exactly zero gradient and never recover; over the first 20-80 steps the
second graph convolution goes (almost) entirely dead, the first one 80-95 %, and the
network predicts (nearly) a constant. The loss plateaus at or above the variance of
the target; no value is ever non-finite.

ORIGIN: ``gc2`` - the graph convolution whose ReLU units die first and completely
(the head sees only its zeros); ``gc1`` follows most of the way.

Fix: a 10x smaller learning rate (the usual "one order below the LR-finder minimum");
same graphs, model, optimiser type and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "gc2"
SOURCE = ("Kipf & Welling 2017 GCN (hand-written A_hat X W layer as in the pygcn reference code); "
          "GNNs for supply-chain risk / delay prediction (e.g. Kosasih & Brintrup 2022, IJPR); "
          "dying-ReLU with high lr and uncentred non-negative features (Lu et al. 2019 "
          "'Dying ReLU and initialization'; CS231n notes).")


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d_in, d_out))
        self.bias = nn.Parameter(torch.zeros(d_out))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, a_hat):
        return a_hat @ (x @ self.weight) + self.bias


class DelayGCN(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.gc1 = GraphConv(d_in, hidden)
        self.gc2 = GraphConv(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, a_hat):
        h = F.relu(self.gc1(x, a_hat))
        h = F.relu(self.gc2(h, a_hat))
        return self.out(h).squeeze(-1)


def _network(g, n_nodes, d_in, w_true):
    # tiered network: each node sources from 1-3 nodes of the previous tier
    tiers = torch.randint(0, 4, (n_nodes,), generator=g).sort().values
    A = torch.zeros(n_nodes, n_nodes)
    for i in range(n_nodes):
        prev = (tiers == tiers[i] - 1).nonzero().flatten()
        if len(prev):
            k = int(torch.randint(1, 4, (1,), generator=g))
            src = prev[torch.randint(0, len(prev), (k,), generator=g)]
            A[i, src] = 1.0
    A = ((A + A.T) > 0).float() + torch.eye(n_nodes)
    dinv = A.sum(1).rsqrt()
    a_hat = dinv[:, None] * A * dinv[None, :]
    x = torch.rand(n_nodes, d_in, generator=g)  # min-max scaled KPIs in [0, 1]
    own = x @ w_true
    upstream = a_hat @ torch.relu(own)
    y = own + 1.5 * (a_hat @ upstream) + 0.2 * torch.randn(n_nodes, generator=g)
    return x, a_hat, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(40 + seed)
    d_in = 10
    hidden = [64, 128, 96][seed % 3]
    n_nodes = [120, 90, 150][seed % 3]
    lr = [0.15, 0.18, 0.2][seed % 3]
    if fixed:
        lr = lr / 10
    steps = 150
    w_true = torch.randn(d_in, generator=g)
    graphs = [_network(g, n_nodes, d_in, w_true) for _ in range(steps)]
    ys = torch.cat([y for _, _, y in graphs])
    mu, sd = ys.mean(), ys.std()
    batches = [((x, a_hat), (y - mu) / sd) for x, a_hat, y in graphs]
    model = DelayGCN(d_in, hidden)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
