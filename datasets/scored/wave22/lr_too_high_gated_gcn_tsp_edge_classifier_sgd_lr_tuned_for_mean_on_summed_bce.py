"""Graph ConvNet for the travelling salesman problem (Joshi, Laurent & Bresson 2019, "An efficient
graph convolutional network technique for the TSP"): node coordinates and pairwise distances are
embedded, a stack of edge-gated graph convolutions with residual connections updates node and
edge features, and an edge MLP predicts for every edge whether it belongs to the optimal tour
(supervised by exact tours; weighted BCE because only 2/(n-1) of the edges are positive).

Mechanism: the SGD+momentum learning rate (0.015-0.03) comes from the reference recipe, which
averages the edge BCE; this training script sums it over every edge of every graph in the batch
(reduction="sum", ~1000-1400 terms) so that the loss is "per-graph interpretable". The step size
is therefore ~1000x the tuned one: the first updates overshoot, the edge logits and the gated
aggregations grow each step instead of settling, and within a handful of steps the loss explodes
to inf/NaN (or, when the LayerNorms absorb part of it, ends far above its start).

ORIGIN: "layers.0" -- the first gated graph-conv layer; every layer is over-stepped, the first
one is where the over-sized updates enter the message passing.

Fix (fixed=True): the learning rate is divided by the number of summed loss terms (equivalent to
the recipe's mean-reduced loss at its tuned lr). Same model, loss, data and batches.
"""
import itertools
import numpy as np
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = "layers.0"
SOURCE = ("Joshi et al. 2019 TSP GCN re-implementations; lr tuned for a mean-reduced loss used "
          "with reduction='sum' (effective step x batch x edges), loss explodes to nan")


class GatedGCNLayer(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.U, self.V = nn.Linear(h, h), nn.Linear(h, h)
        self.A, self.B, self.C = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.norm_h, self.norm_e = nn.LayerNorm(h), nn.LayerNorm(h)

    def forward(self, h, e):                       # h: (B, n, H), e: (B, n, n, H)
        e_new = self.A(e) + self.B(h)[:, :, None] + self.C(h)[:, None, :]
        gate = torch.sigmoid(e_new)
        agg = (gate * self.V(h)[:, None, :, :]).sum(2) / (gate.sum(2) + 1e-6)
        h = h + torch.relu(self.norm_h(self.U(h) + agg))
        e = e + torch.relu(self.norm_e(e_new))
        return h, e


class TSPGCN(nn.Module):
    def __init__(self, hidden, n_layers):
        super().__init__()
        self.node_emb = nn.Linear(2, hidden)
        self.edge_emb = nn.Linear(1, hidden)
        self.layers = nn.ModuleList([GatedGCNLayer(hidden) for _ in range(n_layers)])
        self.edge_out = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, coords):
        d = torch.cdist(coords, coords)[..., None]
        h, e = self.node_emb(coords), self.edge_emb(d)
        for layer in self.layers:
            h, e = layer(h, e)
        return self.edge_out(e).squeeze(-1)


def optimal_tour_edges(xy, perms):
    n = xy.shape[1]
    d = np.sqrt(((xy[:, :, None] - xy[:, None]) ** 2).sum(-1))
    tours = np.concatenate([np.zeros((len(perms), 1), int), perms, np.zeros((len(perms), 1), int)], 1)
    lengths = d[:, tours[:, :-1], tours[:, 1:]].sum(-1)            # (B, n_perms)
    best = tours[lengths.argmin(1)]
    adj = np.zeros((xy.shape[0], n, n), np.float32)
    bi = np.arange(xy.shape[0])[:, None]
    adj[bi, best[:, :-1], best[:, 1:]] = 1.0
    adj[bi, best[:, 1:], best[:, :-1]] = 1.0
    return adj


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n = [7, 6, 7][seed % 3]
    hidden = [32, 24, 40][seed % 3]
    n_layers = [3, 4, 3][seed % 3]
    batch = [32, 48, 24][seed % 3]
    base_lr = [0.02, 0.015, 0.03][seed % 3]
    steps = 200
    perms = np.array([p for p in itertools.permutations(range(1, n)) if p[0] < p[-1]])

    batches = []
    for _ in range(steps):
        xy = rng.random((batch, n, 2))
        adj = optimal_tour_edges(xy, perms)
        batches.append((torch.tensor(xy, dtype=torch.float32), torch.tensor(adj)))

    model = TSPGCN(hidden, n_layers)
    n_terms = batch * n * (n - 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=base_lr / n_terms if fixed else base_lr,
                                momentum=0.9)
    pos_weight = torch.tensor((n - 3) / 2.0)                # negatives / positives per row
    mask = ~torch.eye(n, dtype=torch.bool)
    bce = nn.BCEWithLogitsLoss(pos_weight=pos_weight, reduction="sum")

    def loss_fn(logits, adj):
        return bce(logits[:, mask], adj[:, mask])

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
