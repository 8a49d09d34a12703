"""healthy (hard negative): a GIN-style sum-aggregation GNN on heavy-tailed (scale-free) graphs,
with LR warmup.

Nothing is wrong. A node-level regressor in the style of GIN (Xu et al. 2019: sum aggregation
``h_i' = MLP((1 + eps) h_i + sum_{j->i} h_j)``, built here with ``index_add_`` over an edge list)
is trained on batches of preferential-attachment graphs (Barabasi-Albert, 150-200 nodes), whose
degrees are heavy-tailed: most nodes have 2-6 neighbours, each graph has a few hubs with 25-75.
The target is a smooth function of a node's own descriptors, the mean of its neighbours'
descriptors and its log-degree, standardised. Because the aggregation is a sum (the choice GIN
recommends for expressiveness), a hub's aggregated input is much larger than an ordinary node's:
after the first layer's ReLU the sums no longer cancel and the hubs' inputs to the next layer are
5-16x the median node's. The gradients of the message-passing layers are dominated by the few
hubs and their residuals, so the total gradient norm is heavy-tailed and jumpy: it ranges over
more than an order of magnitude (about 0.3 to 11) and jumps by 3-10x between consecutive batches
depending on how many large hubs a batch holds. It is stable: the degrees are large but finite and
bounded by the graph size, AdamW normalises the step per parameter, and a linear warmup (the lr
rises 20-50x over the first 15-25% of the run, as in many GNN recipes) keeps the first updates
small while Adam's second-moment estimates settle; the loss falls by 30-50% over the run, with
batch-to-batch wobble from the varying graphs. A rule that flags gradient-norm spikes, a rising
lr, or a few very large activations in one layer is wrong here.

ORIGIN is None (no failure).
Fixed: identical to the unfixed run (there is nothing to fix).
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = (
    "GIN (Xu et al. 2019, 'How Powerful are Graph Neural Networks?') sum aggregation, as in "
    "PyTorch Geometric's GINConv, on scale-free graphs (Barabasi & Albert 1999; social / "
    "citation networks with hub nodes), trained with AdamW and linear warmup."
)


class GINLayer(nn.Module):
    def __init__(self, d_in: int, width: int) -> None:
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(()))
        self.mlp = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width))
        self.act = nn.ReLU()

    def forward(self, h: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
        agg = torch.zeros_like(h).index_add_(0, edges[1], h[edges[0]])
        return self.act(self.mlp((1 + self.eps) * h + agg))


class GIN(nn.Module):
    def __init__(self, d: int, width: int, depth: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            GINLayer(d if i == 0 else width, width) for i in range(depth)
        )
        self.head = nn.Linear(width, 1)

    def forward(self, x: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
        h = x
        for layer in self.layers:
            h = layer(h, edges)
        return self.head(h)


def _ba_graph(g: torch.Generator, n: int, m: int) -> torch.Tensor:
    """Barabasi-Albert preferential attachment; returns both directions of every edge."""
    targets = list(range(m))
    repeated: list[int] = []
    src, dst = [], []
    for v in range(m, n):
        for u in set(targets):
            src.append(v)
            dst.append(u)
        repeated += list(set(targets)) + [v] * m
        idx = torch.randint(0, len(repeated), (m,), generator=g).tolist()
        targets = [repeated[i] for i in idx]
    e = torch.tensor([src, dst])
    return torch.cat([e, e.flip(0)], 1)


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d = rng.choice([6, 8])
    width = rng.choice([32, 48, 64])
    depth = rng.choice([2, 3])
    graphs = rng.choice([2, 3])
    n_nodes = rng.choice([150, 200])
    m = rng.choice([2, 3])
    steps = rng.choice([150, 180, 200])
    peak_lr = rng.choice([2e-3, 3e-3, 5e-3])
    warmup = int(steps * rng.choice([0.15, 0.2, 0.25]))
    start = rng.choice([1 / 20, 1 / 50])

    g = torch.Generator().manual_seed(550_000 + seed)
    w_self = torch.randn(d, generator=g) / d**0.5
    w_nbr = torch.randn(d, generator=g) / d**0.5
    batches, ys = [], []
    for _ in range(steps):
        xs, es, targets = [], [], []
        offset = 0
        for _ in range(graphs):
            e = _ba_graph(g, n_nodes, m)
            x = torch.randn(n_nodes, d, generator=g)
            deg = torch.zeros(n_nodes).index_add_(0, e[1], torch.ones(e.shape[1]))
            nb = torch.zeros(n_nodes, d).index_add_(0, e[1], x[e[0]]) / deg.unsqueeze(-1)
            targets.append(torch.tanh(x @ w_self) + torch.tanh(nb @ w_nbr) + 0.5 * torch.log(deg))
            xs.append(x)
            es.append(e + offset)
            offset += n_nodes
        y = torch.cat(targets).unsqueeze(-1)
        ys.append(y)
        batches.append(((torch.cat(xs), torch.cat(es, 1)), y))
    all_y = torch.cat(ys)
    mu, sd = all_y.mean(), all_y.std()
    batches = [(inp, (y - mu) / sd) for inp, y in batches]

    torch.manual_seed(seed)
    model = GIN(d, width, depth)
    opt = torch.optim.AdamW(model.parameters(), lr=peak_lr, weight_decay=1e-4)

    def factor(step: int) -> float:
        return start + (1 - start) * min(1.0, step / warmup)

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    opt.register_step_post_hook(lambda *_: sched.step())  # scheduler steps after each step
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
