"""Learning to prune TSP edges (Sun et al. 2021 style "boosting TSP solvers by pruning the
search space"): for every city, its k nearest-neighbour candidate edges are described by
non-negative hand-crafted features (edge length, length ratio to the 1st/k-th neighbour,
rank of j among i's neighbours and of i among j's, shared-neighbour count) and a one-hidden-layer
ReLU MLP classifies whether the edge belongs to the optimal tour; class-weighted cross-entropy
(positives are rarer), labels from exact tours of small instances.

Mechanism: the pipeline started with a logistic-regression pruner trained by SGD with
lr = 1..3 (fine for a convex linear model). The user dropped in the MLP and kept the optimiser
line, SGD(momentum=0.9, lr=1.5..2). All inputs to ``fc1`` are non-negative, so each hidden
unit's weight update has one sign across the whole batch; the huge steps alternately push
units far up (exploding logits) and then far down, and within a few steps the pre-activations
of ``fc1`` are negative for every edge. Its ReLU ``act1`` outputs exactly 0, the logits
collapse to the last layer's bias, and with class weighting the best a constant can do is
log(2) ~ 0.69: the loss sits there for the rest of the run.

ORIGIN: ``act1`` - the hidden ReLU, which dies and cuts all gradient to ``fc1``.

Fix: SGD(momentum=0.9) with lr = 0.02 (nothing else changes).
"""
import itertools
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "act1"
SOURCE = ("ML-based TSP candidate-edge pruning (Sun, Ernst, Arulselvan 2021; Fitzpatrick et al.) "
          "MLP variant trained with the logistic-regression SGD learning rate; dying ReLU plateau")


class EdgeMLP(nn.Module):
    def __init__(self, fin, h):
        super().__init__()
        self.fc1 = nn.Linear(fin, h)
        self.act1 = nn.ReLU()
        self.out = nn.Linear(h, 2)

    def forward(self, x):
        return self.out(self.act1(self.fc1(x)))


def _pool(g, n_inst, n, k):
    perms = torch.tensor([(0,) + p for p in itertools.permutations(range(1, n))])
    feats, labels = [], []
    for _ in range(n_inst):
        xy = torch.rand(n, 2, generator=g)
        d = torch.cdist(xy, xy)
        tour_len = d[perms, perms.roll(-1, 1)].sum(1)
        best = perms[tour_len.argmin()]
        in_tour = torch.zeros(n, n)
        in_tour[best, best.roll(-1)] = 1.0
        in_tour = ((in_tour + in_tour.T) > 0).float()
        dd = d + torch.eye(n) * 1e9
        rank = dd.argsort(1).argsort(1).float()            # rank of j among i's neighbours
        nn_idx = dd.argsort(1)[:, :k]
        knn = torch.zeros(n, n)
        knn.scatter_(1, nn_idx, 1.0)
        shared = knn @ knn.T
        d1 = dd.min(1).values
        dk = dd.gather(1, nn_idx[:, -1:]).squeeze(1)
        for i in range(n):
            for j in nn_idx[i].tolist():
                feats.append([d[i, j] * 10, d[i, j] / d1[i], d[i, j] / dk[i], rank[i, j],
                              rank[j, i], shared[i, j]])
                labels.append(int(in_tour[i, j]))
    return torch.tensor(feats), torch.tensor(labels)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=96, n=8, k=5, B=256, lr=2.0, steps=120),
           dict(h=128, n=7, k=4, B=128, lr=1.5, steps=100),
           dict(h=64, n=8, k=6, B=192, lr=2.0, steps=140)][seed % 3]
    torch.manual_seed(seed)
    model = EdgeMLP(6, cfg["h"])
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else cfg["lr"], momentum=0.9)
    g = torch.Generator().manual_seed(808 + seed)
    X, Y = _pool(g, 150, cfg["n"], cfg["k"])
    pos = Y.float().mean()
    weight = torch.stack([0.5 / (1 - pos), 0.5 / pos])
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, len(Y), (cfg["B"],), generator=g)
        batches.append((X[idx], Y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(weight=weight),
                batches=batches, steps=cfg["steps"])
