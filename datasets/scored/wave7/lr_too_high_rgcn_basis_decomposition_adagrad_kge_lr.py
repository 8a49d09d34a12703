"""Hand-written R-GCN (relational graph convolution with basis decomposition, Schlichtkrull et
al. 2018, three layers) for node classification on synthetic multi-relational graphs (40 graphs
of 120 nodes cycled, 3 edge types, labels from a fixed random teacher rule). Inputs are a tuple
(node features, edge_index, edge_type); messages are scattered with index_add_ and normalised
per relation by the in-degree. The optimiser block was copied from a knowledge-graph-embedding
script (Adagrad, lr=1.0), where each embedding row is touched only now and then. Here every
weight gets a dense gradient each step, and Adagrad's first update is lr * sign(g) = 1.0 on
every coordinate of weights whose scale is ~0.2: the NLL jumps from ~1.4 to tens at step 1, the
network then collapses onto a near-constant prediction and the loss stays at chance level (ln 4)
for the rest of the run, finite throughout.
Fixed: Adagrad with lr=0.05; nothing else changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("R-GCN entity classification (Schlichtkrull et al. 2018) trained with the Adagrad "
          "lr of a KGE recipe (ComplEx/DistMult-style Adagrad, lr up to 1.0); 'loss increases with Adagrad' reports")

N_NODES, N_REL, D_IN, N_CLS = 120, 3, 16, 4


class RGCNLayer(nn.Module):
    def __init__(self, din, dout, n_rel, n_bases):
        super().__init__()
        self.bases = nn.Parameter(torch.empty(n_bases, din, dout))
        self.coeff = nn.Parameter(torch.empty(n_rel, n_bases))
        self.self_loop = nn.Linear(din, dout)
        nn.init.xavier_uniform_(self.bases)
        nn.init.xavier_uniform_(self.coeff)

    def forward(self, h, edge_index, edge_type):
        W = torch.einsum("rb,bio->rio", self.coeff, self.bases)  # (R, din, dout)
        src, dst = edge_index
        msg = torch.bmm(h[src].unsqueeze(1), W[edge_type]).squeeze(1)  # (E, dout)
        # per-(node, relation) in-degree normalisation
        key = dst * self.coeff.shape[0] + edge_type
        deg = torch.zeros(h.shape[0] * self.coeff.shape[0]).index_add_(0, key, torch.ones_like(key, dtype=h.dtype))
        msg = msg / deg[key].unsqueeze(1)
        out = torch.zeros(h.shape[0], W.shape[2]).index_add_(0, dst, msg)
        return out + self.self_loop(h)


class RGCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = RGCNLayer(D_IN, 32, N_REL, 2)
        self.conv2 = RGCNLayer(32, 32, N_REL, 2)
        self.conv3 = RGCNLayer(32, N_CLS, N_REL, 2)

    def forward(self, x, edge_index, edge_type):
        h = F.relu(self.conv1(x, edge_index, edge_type))
        h = F.relu(self.conv2(h, edge_index, edge_type))
        return F.log_softmax(self.conv3(h, edge_index, edge_type), dim=-1)


def _make_graph(g, P, Q):
    n_edges = 5 * N_NODES
    src = torch.randint(0, N_NODES, (n_edges,), generator=g)
    dst = torch.randint(0, N_NODES, (n_edges,), generator=g)
    et = torch.randint(0, N_REL, (n_edges,), generator=g)
    x = torch.randn(N_NODES, D_IN, generator=g)
    # teacher: relation-specific projections of neighbour features
    agg = torch.zeros(N_NODES, N_CLS)
    agg.index_add_(0, dst, torch.bmm(x[src].unsqueeze(1), P[et]).squeeze(1))
    logits = agg + x @ Q
    y = logits.argmax(1)
    return x, torch.stack([src, dst]), et, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    P = torch.randn(N_REL, D_IN, N_CLS, generator=g)
    Q = torch.randn(D_IN, N_CLS, generator=g)
    graphs = [_make_graph(g, P, Q) for _ in range(40)]
    steps = 120
    batches = []
    for s in range(steps):
        x, ei, et, y = graphs[s % len(graphs)]
        batches.append(((x, ei, et), y))
    model = RGCN()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05 if fixed else 1.0)
    return dict(model=model, optimizer=opt, loss_fn=F.nll_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
