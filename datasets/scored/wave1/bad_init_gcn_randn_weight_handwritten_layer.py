"""Hand-written Kipf & Welling GCN (A_hat = D^-1/2 (A+I) D^-1/2) for node classification on a
stochastic-block-model graph, five GraphConvolution layers deep. The GraphConvolution layer
creates its weight as nn.Parameter(torch.randn(in, out)) and never calls a reset_parameters /
glorot init, so every layer multiplies the activation scale by about sqrt(fan_in)/sqrt(2) (~5x
for 64 hidden units with ReLU). From step 0 the logits are ~1e3-1e4 in size, the cross-entropy is
in the hundreds to thousands, and the first SGD-momentum steps (whose gradients are proportional to those huge
activations) throw the weights far out: the loss goes to inf/NaN within a handful of steps.
The fixed run only replaces the init by Glorot (xavier_uniform), as in the reference pygcn code."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "convs.0"
SOURCE = ("Hand-written GCN layers with torch.randn weights (tutorial-style GraphConvolution "
          "without reset_parameters); Kipf & Welling pygcn uses glorot/uniform(1/sqrt(out)) init")


class GraphConvolution(nn.Module):
    def __init__(self, fin, fout, glorot):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(fin, fout))
        self.bias = nn.Parameter(torch.zeros(fout))
        if glorot:
            nn.init.xavier_uniform_(self.weight)

    def forward(self, h, adj):
        return adj @ (h @ self.weight) + self.bias


class GCN(nn.Module):
    def __init__(self, fin, hidden, n_cls, depth, glorot):
        super().__init__()
        dims = [fin] + [hidden] * (depth - 1) + [n_cls]
        self.convs = nn.ModuleList(GraphConvolution(a, b, glorot) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, adj):
        h = x
        for i, conv in enumerate(self.convs):
            h = conv(h, adj)
            if i < len(self.convs) - 1:
                h = F.relu(h)
        return h


def _graph(g, n, n_cls, p_in, p_out, fin):
    labels = torch.randint(0, n_cls, (n,), generator=g)
    same = labels[:, None] == labels[None, :]
    prob = torch.where(same, torch.full((n, n), p_in), torch.full((n, n), p_out))
    a = (torch.rand(n, n, generator=g) < prob).float()
    a = torch.triu(a, 1); a = a + a.t() + torch.eye(n)
    dinv = a.sum(1).rsqrt()
    adj = dinv[:, None] * a * dinv[None, :]
    centers = torch.randn(n_cls, fin, generator=g)
    x = 0.4 * centers[labels] + torch.randn(n, fin, generator=g)
    return x, adj, labels


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_cls, fin = 4, 32
    batches = []
    for _ in range(6):
        x, adj, labels = _graph(g, 160, n_cls, 0.08, 0.01, fin)
        batches.append(((x, adj), labels))
    model = GCN(fin, 64, n_cls, depth=5, glorot=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    steps = 150
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
