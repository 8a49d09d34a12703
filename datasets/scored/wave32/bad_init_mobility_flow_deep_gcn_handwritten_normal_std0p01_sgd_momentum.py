"""County incidence nowcaster: deep hand-written GCN over a commuting/mobility graph (SGD+momentum, MSE).

Mechanism: node features are the last 8 weeks of standardised log-incidence plus two mobility
indices per county; edges are the top commuting flows (symmetric-normalised adjacency with self
loops). The author re-initialises every GCN weight with ``normal_(0, 0.01)`` (the "small random
weights" recipe from shallow models). With 5-7 propagation layers of width 48-96, each layer
multiplies the activation scale by about 0.01*sqrt(width/2) ~ 0.05-0.07, so the signal reaching
the readout is ~1e-7 and the backpropagated gradients vanish just as geometrically. Only the
readout bias learns (the target mean, which is already 0), the loss sits at the target variance
and the run stalls without any non-finite value.

ORIGIN: "layers.0", the first graph-convolution Linear: the geometric shrinkage starts there and
compounds through every later layer.

Fix: xavier (Glorot) uniform init for each GCN weight, zero biases.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Glorot & Bengio 2010 (activations/gradients vanish with depth under too-small init); "
          "Kipf & Welling GCN reference code uses glorot init; reports of deep GCNs 'predicting the mean'")


class MobilityGCN(nn.Module):
    def __init__(self, adj_norm, n_in, width, depth):
        super().__init__()
        self.register_buffer("A", adj_norm)
        dims = [n_in] + [width] * depth
        self.layers = nn.ModuleList(nn.Linear(dims[i], dims[i + 1]) for i in range(depth))
        self.act = nn.ReLU()
        self.readout = nn.Linear(width, 1)

    def forward(self, x):  # x: (B, nodes, feats)
        h = x
        for lin in self.layers:
            h = self.act(self.A @ lin(h))
        return self.readout(h).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [5, 6, 7][seed % 3]
    width = [64, 48, 96][seed % 3]
    lr = [0.05, 0.03, 0.02][seed % 3]
    bs = [8, 12, 10][seed % 3]
    steps = 150
    n_nodes = 60
    # mobility graph: counties on a plane, connect top-k commuting partners (gravity-like)
    pos = torch.rand(n_nodes, 2, generator=g)
    pop = torch.exp(torch.randn(n_nodes, generator=g))
    dist = torch.cdist(pos, pos) + torch.eye(n_nodes)
    flow = pop[:, None] * pop[None, :] / dist ** 2
    flow.fill_diagonal_(0)
    k = 5
    top = flow.topk(k, dim=1).indices
    A = torch.zeros(n_nodes, n_nodes)
    A.scatter_(1, top, 1.0)
    A = ((A + A.T) > 0).float() + torch.eye(n_nodes)
    dinv = A.sum(1).rsqrt()
    A_norm = dinv[:, None] * A * dinv[None, :]

    def snapshot():
        hist = torch.randn(n_nodes, 8, generator=g).cumsum(1) * 0.3
        hist = A_norm @ hist + 0.2 * hist
        mob = torch.randn(n_nodes, 2, generator=g)
        x = torch.cat([hist, mob], 1)
        # next-week incidence: imported infections along commuting edges (two hops) + own trend
        drive = hist[:, -1:] + 0.5 * (hist[:, -1:] - hist[:, -2:-1]) + 0.3 * mob[:, :1]
        y = (A_norm @ (A_norm @ drive)).squeeze(1) + 0.02 * torch.randn(n_nodes, generator=g)
        return x, y

    xs, ys = zip(*[snapshot() for _ in range(steps * bs)])
    X = torch.stack(xs)
    Y = torch.stack(ys)
    X = (X - X.mean((0, 1))) / X.std((0, 1))
    Y = (Y - Y.mean()) / Y.std()

    model = MobilityGCN(A_norm, 10, width, depth)
    for lin in list(model.layers) + [model.readout]:
        if fixed:
            nn.init.xavier_uniform_(lin.weight)
        else:
            nn.init.normal_(lin.weight, 0.0, 0.01)
        nn.init.zeros_(lin.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    batches = [(X[i * bs:(i + 1) * bs], Y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
