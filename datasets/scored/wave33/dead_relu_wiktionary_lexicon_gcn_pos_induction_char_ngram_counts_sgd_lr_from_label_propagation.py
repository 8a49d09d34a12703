"""Hand-written GCN (Kipf & Welling) for part-of-speech induction in a low-resource language:
nodes are word types from a Wiktionary-derived lexicon graph (edges: derivation / translation /
"see also" links), node features are raw character n-gram counts (non-negative), the labels
are the POS of annotated words.  Cross-entropy, plain SGD.

Mechanism: the project started from a label-propagation + logistic-regression baseline that
was trained with SGD at lr 2-3 on the same features, and the GCN kept that learning rate.
The GCN input A_hat @ X is non-negative, so for a hidden unit the gradients of all its
incoming weights share the sign of that unit's back-propagated error and one step at lr 2-3
shifts its pre-activation by many units at once.  The first steps overshoot (loss 10-200),
the hidden units whose rows were pushed down are negative for *every* node (all inputs are
>= 0) and the ones pushed up flip and are pushed down on the following steps; within a few
steps (nearly) all ReLU units of the first graph convolution output exactly 0 with exactly
zero gradient, the readout sees only zeros and the loss settles at log(#POS) = the entropy of
the prior (a stall, no inf/NaN), while the same GCN at lr 0.3 learns.

ORIGIN: ``layers.0`` -- the first graph-convolution layer, whose ReLU units die first (its
inputs are non-negative n-gram counts); deeper layers die because their inputs become zero.

Fix (fixed=True): SGD at lr 0.3; same model, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "layers.0"
SOURCE = ("Kipf & Welling 2017 GCN (pygcn reference implementation); dying ReLU after too-large "
          "SGD steps on non-negative inputs (Lu et al. 2019 'Dying ReLU and initialization'; "
          "PyTorch forum 'GCN outputs constant prediction, all relu zero, lr 0.1'); Wiktionary "
          "lexicon graphs for low-resource POS induction (Li, Graca & Taskar 2012).")

N_FEATS = 256


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d_in, d_out))
        self.bias = nn.Parameter(torch.zeros(d_out))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, adj):
        return adj @ (x @ self.weight) + self.bias


class LexiconGCN(nn.Module):
    def __init__(self, width, depth, n_pos):
        super().__init__()
        dims = [N_FEATS] + [width] * depth
        self.layers = nn.ModuleList([GraphConv(a, b) for a, b in zip(dims[:-1], dims[1:])])
        self.out = nn.Linear(width, n_pos)

    def forward(self, x, adj):
        for layer in self.layers:
            x = torch.relu(layer(x, adj))
        return self.out(adj @ x)


def _graph(g, n, n_pos, profile, p_edge):
    y = torch.randint(0, n_pos, (n,), generator=g)
    counts = torch.poisson(profile[y] + 0.1, generator=g)
    same = (y.unsqueeze(0) == y.unsqueeze(1)).float()
    prob = p_edge * (0.25 + 0.75 * same)
    a = (torch.rand(n, n, generator=g) < prob).float()
    a = torch.triu(a, 1)
    a = a + a.t() + torch.eye(n)
    d = a.sum(1).rsqrt()
    return counts, d.unsqueeze(1) * a * d.unsqueeze(0), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 1, 2][seed % 3]
    lr = 0.3 if fixed else [2.0, 2.5, 3.0][seed % 3]
    n_nodes = [160, 120, 200][seed % 3]
    n_pos = 8
    steps = 120

    torch.manual_seed(seed)
    model = LexiconGCN(width, depth, n_pos)

    # suffix n-grams are POS-indicative; most n-gram buckets are rare
    profile = torch.rand(n_pos, N_FEATS, generator=g).pow(5) * 3.0
    batches = []
    for _ in range(steps):
        x, adj, y = _graph(g, n_nodes, n_pos, profile, p_edge=6.0 / n_nodes)
        batches.append(((x, adj), y))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=steps)
