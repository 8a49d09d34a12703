"""DARTS-style differentiable architecture search over an MLP cell space (min-max scaled
tabular data), first-order with joint updates; the supernet weights get Adam with the SGD
recipe's learning rate.

Mechanism: the supernet is stem (Linear+ReLU) -> 2 DARTS cells -> classifier.  Every cell
edge is a MixedOp: softmax(alpha_edge)-weighted sum of {zero, skip, linear+ReLU,
two-layer MLP}; the architecture logits alpha live in the same model and are trained on the
same batches (first-order DARTS).  The DARTS recipe trains the weights with SGD(lr=0.025 at
batch 64, momentum 0.9; 0.05 after linear batch scaling) and alpha with Adam(3e-4); here the
user switched the weight group to Adam but kept lr=0.05.  Adam moves every weight by ~lr per
step regardless of gradient scale, and with non-negative [0, 1] inputs all incoming weights of
a stem unit move together: within the first steps the stem's pre-activations are pushed
negative for every input, the stem ReLU outputs exact zeros, nothing downstream receives
signal (skip edges just pass zeros on) and the loss sits at the class-prior entropy for the
rest of the search.

ORIGIN: `stem.1`, the stem ReLU that dies first and starves the whole supernet.

Fix: an Adam-sized lr (3e-3) for the weight group (alpha group unchanged).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "stem.1"
SOURCE = ("Liu et al. 2019 DARTS (w: SGD lr 0.025 momentum 0.9, alpha: Adam 3e-4); quark0/darts "
          "and NAS forum threads where swapping the weight optimiser to Adam with the same lr "
          "makes the supernet collapse to a constant prediction")


class MixedOp(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.ops = nn.ModuleList([
            nn.Identity(),                                                   # skip
            nn.Sequential(nn.Linear(C, C), nn.ReLU()),                       # linear_relu
            nn.Sequential(nn.Linear(C, 2 * C), nn.ReLU(), nn.Linear(2 * C, C)),  # mlp
        ])

    def forward(self, x, w):
        # w[0] is the 'zero' op
        return sum(wi * op(x) for wi, op in zip(w[1:], self.ops))


class Cell(nn.Module):
    def __init__(self, C, n_nodes=2):
        super().__init__()
        self.n_nodes = n_nodes
        self.edges = nn.ModuleList()
        for i in range(n_nodes):
            for _ in range(i + 1):
                self.edges.append(MixedOp(C))
        self.out = nn.Linear(C * n_nodes, C)

    def forward(self, s0, weights):
        states, k = [s0], 0
        for i in range(self.n_nodes):
            h = sum(self.edges[k + j](s, weights[k + j]) for j, s in enumerate(states))
            k += len(states)
            states.append(h)
        return self.out(torch.cat(states[1:], dim=-1))


class MLPSupernet(nn.Module):
    def __init__(self, d_in, C, n_cls, n_cells=2, n_nodes=2):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(d_in, C), nn.ReLU())
        self.cells = nn.ModuleList([Cell(C, n_nodes) for _ in range(n_cells)])
        n_edges = n_nodes * (n_nodes + 1) // 2
        self.alphas = nn.Parameter(1e-3 * torch.randn(n_cells, n_edges, 4))
        self.classifier = nn.Linear(C, n_cls)

    def forward(self, x):
        s = self.stem(x)
        for c, cell in enumerate(self.cells):
            s = cell(s, F.softmax(self.alphas[c], dim=-1))
        return self.classifier(s)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(C=32, bs=64, steps=120, d_in=16, n_cls=5),
           dict(C=48, bs=96, steps=100, d_in=24, n_cls=4),
           dict(C=24, bs=48, steps=140, d_in=12, n_cls=6)][seed % 3]
    g = torch.Generator().manual_seed(31 + seed)
    d_in, n_cls = cfg["d_in"], cfg["n_cls"]
    W1 = torch.randn(d_in, 32, generator=g) / d_in ** 0.5
    W2 = torch.randn(32, n_cls, generator=g) / 32 ** 0.5
    n = cfg["bs"] * cfg["steps"]
    Z = torch.randn(n, d_in, generator=g)
    W0 = torch.randn(d_in, n_cls, generator=g)
    Y = (Z @ W0 + torch.relu(Z @ W1) @ W2 + 0.1 * torch.randn(n, n_cls, generator=g)).argmax(1)
    X = (Z - Z.min(0).values) / (Z.max(0).values - Z.min(0).values)   # MinMaxScaler -> [0, 1]
    batches = [(X[i * cfg["bs"]:(i + 1) * cfg["bs"]], Y[i * cfg["bs"]:(i + 1) * cfg["bs"]])
               for i in range(cfg["steps"])]

    torch.manual_seed(seed)
    model = MLPSupernet(d_in, cfg["C"], n_cls)
    weights = [p for n_, p in model.named_parameters() if n_ != "alphas"]
    w_lr = 3e-3 if fixed else 0.05           # BUG: SGD-recipe lr reused with Adam
    opt = torch.optim.Adam([
        {"params": weights, "lr": w_lr},
        {"params": [model.alphas], "lr": 3e-4, "betas": (0.5, 0.999), "weight_decay": 1e-3},
    ])
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=cfg["steps"])
