"""Two-layer GraphSAGE (mean aggregator with root weight, ReLU after each layer) for node
classification on a citation-like stochastic-block-model graph with log-count bag-of-words
features. When the baseline's optimiser was switched from Adadelta to Adam the learning rate 1.0
(Adadelta's default) was kept. Adam's normalised first steps move every weight by ~1.0: the loss
spikes to ~1e3 on step 2, and the next updates drive the pre-activations of the first SAGE
layer's units below zero for every node; within ~10 steps all of act1 (then all of act2) is dead,
the classifier sees a constant zero vector, every weight below it gets exactly zero gradient, and
the cross-entropy sits at log(5) = 1.609, the uniform-prediction value (a silent stall, no NaN).
The fixed run only replaces the ReLUs by LeakyReLU(0.1): with the same learning rate the units
cannot be switched off completely and the model fits the graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "act1"
SOURCE = ("Dying ReLU with too-large learning rates (CS231n notes; Lu et al. 2019); GraphSAGE, Hamilton "
          "et al. 2017; Adadelta default lr=1.0 carried over to Adam")


class SAGEConv(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.lin_self = nn.Linear(fin, fout)
        self.lin_neigh = nn.Linear(fin, fout, bias=False)

    def forward(self, h, adj_mean):
        return self.lin_self(h) + self.lin_neigh(adj_mean @ h)


class GraphSAGE(nn.Module):
    def __init__(self, fin, hidden, n_cls, leaky):
        super().__init__()
        self.sage1 = SAGEConv(fin, hidden)
        self.act1 = nn.LeakyReLU(0.1) if leaky else nn.ReLU()
        self.sage2 = SAGEConv(hidden, hidden)
        self.act2 = nn.LeakyReLU(0.1) if leaky else nn.ReLU()
        self.cls = nn.Linear(hidden, n_cls)

    def forward(self, x, adj_mean):
        h = self.act1(self.sage1(x, adj_mean))
        h = self.act2(self.sage2(h, adj_mean))
        return self.cls(h)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n, n_cls, vocab = 300, 5, 200
    batches = []
    topic = torch.rand(n_cls, vocab, generator=g) ** 4
    topic = topic / topic.sum(1, keepdim=True)
    for _ in range(4):
        y = torch.randint(0, n_cls, (n,), generator=g)
        same = y[:, None] == y[None, :]
        p = torch.where(same, torch.tensor(0.05), torch.tensor(0.005))
        a = (torch.rand(n, n, generator=g) < p).float(); a = torch.triu(a, 1); a = a + a.t()
        adj_mean = a / a.sum(1, keepdim=True).clamp_min(1)
        counts = torch.stack([torch.multinomial(topic[c], 30, replacement=True, generator=g) for c in y])
        x = torch.zeros(n, vocab).scatter_add_(1, counts, torch.ones(n, 30))
        x = torch.log1p(x)
        batches.append(((x, adj_mean), y))
    model = GraphSAGE(vocab, 32, n_cls, leaky=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1.0)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
