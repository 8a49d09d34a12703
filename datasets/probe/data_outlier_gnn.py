"""data_outlier in a message-passing graph regressor: one batch carries graphs with corrupt
node features.

Mechanism: a graph-level property regressor in the style of a molecular-property GNN (node
embedding, L message-passing layers ``h_i' = ReLU(W_self h_i + W_nbr mean_{j->i} h_j)`` with the
neighbour mean built by ``index_add_`` over an edge list, mean-pool readout per graph, MLP head;
MSE, SGD with momentum) trains on small random geometric graphs whose node descriptors are
standardised. Training is calm until one batch, at a seed-dependent step in the middle of the
run, holds one to three graphs whose descriptors came from a failed featurisation: either NaN on
several nodes (a descriptor that could not be computed), or the missing-value sentinel of the
upstream export (``99999`` / ``-9999``, a few nodes, several columns). The graphs' structure and
targets are fine. A NaN row makes the node embeddings, every neighbour that aggregates it and
the pooled output NaN: the loss is NaN at that step. A sentinel row gives
embeddings ~1e4-1e5 that spread to the neighbours, a prediction error ~1e3-1e4 on the corrupt
graphs and a batch loss ~1e6-1e8, all finite; the gradients are as many orders of magnitude above
their usual size, and one momentum SGD step moves the weights so far that even the next, clean
batch overflows float32: the loss is inf / NaN one step later. Seeds change the
descriptor count, the width, the depth, the batch (graphs per step), the graph sizes, the lr,
the corruption kind and the corrupt step.

ORIGIN is None: the failure starts in the batch's node features, not in a module; the embedding
layer only receives them (the suite's convention for data_outlier).
Fixed: the same batches, with the corrupt node features replaced by the graphs' clean
descriptors (what a per-batch isfinite / range filter restores).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch Geometric / DGL discussions 'loss becomes NaN after some epochs on a molecular "
    "dataset' traced to NaN or sentinel node descriptors from RDKit featurisation failures "
    "(e.g. Gasteiger charges returning NaN, missing values exported as 99999); checking "
    "torch.isfinite(data.x) and dropping the graphs fixes it."
)


class MessagePassing(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.self_lin = nn.Linear(width, width)
        self.nbr_lin = nn.Linear(width, width, bias=False)
        self.act = nn.ReLU()

    def forward(self, h: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
        src, dst = edges[0], edges[1]
        agg = torch.zeros_like(h).index_add_(0, dst, h[src])
        deg = torch.zeros(h.shape[0], dtype=h.dtype).index_add_(
            0, dst, torch.ones(dst.shape[0], dtype=h.dtype)
        )
        agg = agg / deg.clamp_min(1.0).unsqueeze(-1)
        return self.act(self.self_lin(h) + self.nbr_lin(agg))


class GraphRegressor(nn.Module):
    def __init__(self, d: int, width: int, depth: int) -> None:
        super().__init__()
        self.embed = nn.Linear(d, width)
        self.layers = nn.ModuleList(MessagePassing(width) for _ in range(depth))
        self.head = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, x: torch.Tensor, edges: torch.Tensor, graph: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h, edges)
        n_graphs = int(graph.max()) + 1
        pooled = torch.zeros(n_graphs, h.shape[1], dtype=h.dtype).index_add_(0, graph, h)
        count = torch.zeros(n_graphs, dtype=h.dtype).index_add_(
            0, graph, torch.ones(graph.shape[0], dtype=h.dtype)
        )
        return self.head(pooled / count.unsqueeze(-1))


def _graph(g: torch.Generator, n: int, d: int, k: int):
    pos = torch.rand(n, 2, generator=g)
    dist = torch.cdist(pos, pos) + torch.eye(n) * 1e9
    nbr = dist.topk(k, largest=False).indices  # k nearest neighbours, made undirected
    src = torch.arange(n).repeat_interleave(k)
    dst = nbr.reshape(-1)
    edges = torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], 1)
    edges = torch.unique(edges, dim=1)
    attrs = torch.randn(n, d - 2, generator=g)
    x = torch.cat([(pos - 0.5) * 3.4, attrs], 1)
    return x, edges


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d = rng.choice([6, 8, 10])
    width = rng.choice([24, 32, 48])
    depth = rng.choice([2, 3])
    graphs = rng.choice([8, 12, 16])  # graphs per batch
    k = rng.choice([2, 3])
    steps = rng.choice([120, 150, 180])
    lr = rng.choice([0.01, 0.02, 0.03])
    bad_step = rng.randrange(int(0.3 * steps), int(0.7 * steps))
    kind = rng.choice(["nan", "sentinel"])
    n_bad = rng.choice([1, 2, 3])

    g = torch.Generator().manual_seed(520_000 + seed)
    w_self = torch.randn(d, generator=g) / d**0.5
    w_nbr = torch.randn(d, generator=g) / d**0.5
    batches, ys = [], []
    for step in range(steps):
        xs, es, gid, targets = [], [], [], []
        offset = 0
        for j in range(graphs):
            n = int(torch.randint(6, 15, (1,), generator=g))
            x, e = _graph(g, n, d, k)
            # Property: a nonlinear function of each node and its neighbourhood mean, pooled.
            deg = torch.zeros(n).index_add_(0, e[1], torch.ones(e.shape[1]))
            nb = torch.zeros(n, d).index_add_(0, e[1], x[e[0]]) / deg.clamp_min(1).unsqueeze(-1)
            targets.append(torch.tanh(x @ w_self + nb @ w_nbr).mean() + 0.05 * deg.mean())
            if step == bad_step and j < n_bad:  # drawn in both builds: same random stream
                bad = x.clone()
                rows = torch.randperm(n, generator=g)[: max(2, n // 3)]
                cols = torch.randperm(d, generator=g)[: max(2, d // 2)]
                if kind == "nan":
                    bad[rows.unsqueeze(-1), cols] = float("nan")
                else:
                    pick = torch.rand(len(rows), len(cols), generator=g) < 0.5
                    bad[rows.unsqueeze(-1), cols] = torch.where(
                        pick, torch.tensor(99999.0), torch.tensor(-9999.0)
                    )
                if not fixed:
                    x = bad
            xs.append(x)
            es.append(e + offset)
            gid.append(torch.full((n,), j, dtype=torch.long))
            offset += n
        y = torch.stack(targets).unsqueeze(-1)
        ys.append(y)
        batches.append(((torch.cat(xs), torch.cat(es, 1), torch.cat(gid)), y))
    all_y = torch.cat(ys)
    mu, sd = all_y.mean(), all_y.std()
    batches = [(inp, (y - mu) / sd) for inp, y in batches]

    torch.manual_seed(seed)
    model = GraphRegressor(d, width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
