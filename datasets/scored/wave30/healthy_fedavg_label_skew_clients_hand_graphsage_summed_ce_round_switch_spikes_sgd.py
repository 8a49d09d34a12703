"""Federated node classification with FedAvg across institutions, simulated as one model that
sees each client's subgraph in turn: every client holds its own graph (nodes with noisy
features, homophilous edges) with a strongly skewed label mix (most of its nodes come from two
of the six classes), runs a few local SGD steps on it, and the next client continues from the
result.  The model is a hand-written two-layer GraphSAGE (mean aggregator, concatenation of
self and neighbour features, ReLU), and the loss is the cross-entropy *summed* over the client's
labelled nodes, as in the FedAvg paper's per-example-sum convention.

Healthy, but easy to misread: the summed loss is in the hundreds at the start and still tens at
the end, and every time the round-robin moves to the next client the loss jumps (the local steps
on the previous client pulled the classifier towards that client's two dominant classes) and
then recovers within the client's local steps.  Over the run the loss falls well below its
starting level.

ORIGIN = None: nothing fails.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("FedAvg (McMahan et al. 2017) with pathological non-IID label skew, whose loss "
          "oscillates at client switches; GraphSAGE mean aggregator (Hamilton et al. 2017) "
          "written by hand with a dense normalised adjacency.")


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(2 * d_in, d_out)

    def forward(self, h, adj_mean):
        return self.lin(torch.cat([h, adj_mean @ h], dim=-1))


class GraphSAGE(nn.Module):
    def __init__(self, d_in, hidden, n_classes):
        super().__init__()
        self.sage1 = SAGELayer(d_in, hidden)
        self.act = nn.ReLU()
        self.sage2 = SAGELayer(hidden, n_classes)

    def forward(self, x, adj_mean):
        return self.sage2(self.act(self.sage1(x, adj_mean)), adj_mean)


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3131 + seed)
    hidden = pick(1, [32, 64, 48])
    lr = pick(2, [2e-3, 1e-3, 1.5e-3])
    n_nodes = pick(3, [120, 160, 200])
    n_clients = pick(4, [4, 5, 6])
    local_steps = pick(5, [5, 8, 6])
    steps = 150
    d_in, n_classes = 16, 6

    model = GraphSAGE(d_in, hidden, n_classes)
    protos = torch.randn(n_classes, d_in, generator=g)

    def client_graph(k):
        major = torch.tensor([k % n_classes, (k + 1) % n_classes])
        is_major = torch.rand(n_nodes, generator=g) < 0.8
        y = torch.where(is_major, major[torch.randint(0, 2, (n_nodes,), generator=g)],
                        torch.randint(0, n_classes, (n_nodes,), generator=g))
        x = 0.6 * protos[y] + 1.0 * torch.randn(n_nodes, d_in, generator=g)
        same = (y[:, None] == y[None, :]).float()
        p_edge = 0.06 * same + 0.01 * (1 - same)
        a = (torch.rand(n_nodes, n_nodes, generator=g) < p_edge).float()
        a = torch.triu(a, 1)
        a = a + a.t()
        adj_mean = a / a.sum(1, keepdim=True).clamp_min(1.0)
        labelled = torch.rand(n_nodes, generator=g) < 0.5
        target = torch.where(labelled, y, torch.full_like(y, -100))
        return x, adj_mean, target

    batches = []
    for s in range(steps):
        k = (s // local_steps) % n_clients
        x, adj, target = client_graph(k)  # a fresh sample of the client's graph each step
        batches.append(((x, adj), target))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return {"model": model, "optimizer": optimizer,
            "loss_fn": lambda out, y: F.cross_entropy(out, y, ignore_index=-100, reduction="sum"),
            "batches": batches, "steps": steps}
