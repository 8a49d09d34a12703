"""Two-layer GCN (written by hand) for entity typing on small knowledge-graph neighbourhoods.

Model: every batch is a block-diagonal union of entity neighbourhood graphs; each entity carries
non-negative count features (how often it appears with each relation as head / tail). A GCN
layer (symmetric-normalised adjacency x `l1`) -> ReLU (`act`) -> a second GCN layer `l2` gives
type logits per entity. Loss: cross-entropy over the (balanced) entity types.

Mechanism: the learning rate came from the linear scaling rule: the reference rate 0.05 was
tuned with one neighbourhood graph per step, and was multiplied by the number of graphs packed
into a batch (32-48), with no warm-up. With momentum SGD the first updates of `l1` are huge;
because the inputs are non-negative counts, each hidden unit's weights all move in the same
direction, and for every unit pushed down the pre-activation becomes negative for every entity.
Within a few steps all (or all but one or two) units of the ReLU `act` output exactly zero for
every entity, `l1` gets (almost) no gradient again and the logits are reduced to the bias of
`l2`; with balanced types the loss sits around log(n_types), bouncing with the oversized bias
updates, for the rest of the run (a stall, no NaN).

ORIGIN: `act` -- the hidden ReLU is where the units die; `l1` upstream of it stops learning
because of it.

Fix: use the reference rate 0.05 (no linear scaling). Same model, optimiser, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "act"
SOURCE = ("Goyal et al. 2017 (linear scaling rule needs warm-up); Kipf & Welling GCN; the "
          "dying-ReLU pattern reported for GNNs trained with large SGD steps on raw count "
          "features (all hidden units zero, loss stuck at log C)")


class GCN(nn.Module):
    def __init__(self, fin, hidden, n_types):
        super().__init__()
        self.l1 = nn.Linear(fin, hidden)
        self.act = nn.ReLU()
        self.l2 = nn.Linear(hidden, n_types)

    def forward(self, A, X):
        h = self.act(A @ self.l1(X))
        return A @ self.l2(h)


def neighbourhood(g, n, n_types, proto):
    y = torch.randint(0, n_types, (n,), generator=g)
    p = 0.15 * (y[:, None] == y[None, :]).float() + 0.02
    A = (torch.rand(n, n, generator=g) < p).float()
    A = ((A + A.t()) > 0).float()
    A.fill_diagonal_(1.0)
    d = A.sum(1)
    A = A / torch.sqrt(d[:, None] * d[None, :])
    X = torch.poisson(proto[y] * 2.0, generator=g)
    return A, X, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_types = [5, 6, 7][seed % 3]
    fin = [40, 48, 32][seed % 3]              # 2 x number of relations
    hidden = [64, 96, 48][seed % 3]
    graphs_per_batch = [32, 40, 48][seed % 3]
    n_per_graph = [8, 6, 6][seed % 3]
    steps = [150, 160, 140][seed % 3]
    base_lr = 0.05
    lr = base_lr if fixed else base_lr * graphs_per_batch

    proto = torch.rand(n_types, fin, generator=g)
    batches = []
    for _ in range(steps):
        parts = [neighbourhood(g, n_per_graph, n_types, proto) for _ in range(graphs_per_batch)]
        A = torch.block_diag(*[p[0] for p in parts])
        X = torch.cat([p[1] for p in parts])
        y = torch.cat([p[2] for p in parts])
        batches.append(((A, X), y))

    model = GCN(fin, hidden, n_types)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
