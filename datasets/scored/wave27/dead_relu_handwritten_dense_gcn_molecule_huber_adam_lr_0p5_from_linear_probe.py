"""Molecular property regressor: a GCN written by hand on dense, symmetric-normalised
adjacency matrices (x: B x N x F node features, A: B x N x N), mean readout, small ReLU head,
Huber (smooth-L1) loss on a standardised target, zero-initialised output layer. The Adam
learning rate (0.4-0.6 depending on the seed) was copied from a linear probe on fingerprint
features that trained fine with it.

Mechanism: Adam moves every parameter by ~lr per step regardless of gradient scale. For the
GCN with ~1/sqrt(fan_in) weights, lr ~0.5 changes each weight by a sizeable fraction of its
magnitude on every early step, all in a direction set by the (sign-coherent) initial residual.
Within the first tens of steps the pre-activations of the head ReLU (and of the first graph
convolution) are pushed below zero for every molecule; the dead units pass no gradient to their weights,
Adam's moment estimates for them decay to zero and they never come back. The readout becomes
a constant, the loss stalls at the variance of the target around its mean; nothing becomes
non-finite.

ORIGIN: ``head.1``, the ReLU of the regression head: it sits directly under the output layer,
gets the largest coherent early updates and dies completely on every seed; with it dead the
prediction is a constant whatever the graph layers do (the first conv ReLU also dies, but
the head is where the output loses its dependence on the input).

Fix: Adam lr 1e-3 (the usual value for a GNN); model, data, loss and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = ("Kipf & Welling 2017 GCN written by hand with dense normalised adjacency (common in tutorials); "
          "PyTorch-forums / StackOverflow reports 'GNN loss stuck, all node embeddings zero after a few "
          "iterations with lr 0.5', dying ReLU under a learning rate reused from a linear model")


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.act = nn.ReLU()

    def forward(self, x, a_hat):
        return self.act(self.lin(torch.bmm(a_hat, x)))


class GCNRegressor(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        dims = [d_in] + [width] * depth
        self.convs = nn.ModuleList(GraphConv(dims[i], dims[i + 1]) for i in range(depth))
        self.head = nn.Sequential(nn.Linear(width, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x, a_hat, mask):
        h = x
        for conv in self.convs:
            h = conv(h, a_hat)
        g = (h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
        return self.head(g).squeeze(-1)


def random_molecules(g, batch, n_max, n_types):
    n = torch.randint(n_max // 2, n_max + 1, (batch,), generator=g)
    mask = (torch.arange(n_max)[None, :] < n[:, None]).float()
    types = torch.randint(0, n_types, (batch, n_max), generator=g)
    x = nn.functional.one_hot(types, n_types).float()
    # chain backbone plus random ring-closing bonds
    adj = torch.zeros(batch, n_max, n_max)
    idx = torch.arange(n_max - 1)
    adj[:, idx, idx + 1] = 1.0
    extra = (torch.rand(batch, n_max, n_max, generator=g) < 0.06).float()
    adj = ((adj + extra) > 0).float()
    adj = torch.triu(adj, 1)
    adj = adj + adj.transpose(1, 2)
    adj = adj * mask[:, :, None] * mask[:, None, :]
    deg = adj.sum(-1, keepdim=True)
    x = torch.cat([x, deg / 3.0], dim=-1) * mask.unsqueeze(-1)
    a = adj + torch.diag_embed(mask)
    dinv = a.sum(-1).clamp_min(1.0).rsqrt()
    a_hat = dinv[:, :, None] * a * dinv[:, None, :]
    return x, a_hat, mask, types, adj


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 2 + seed % 2
    width = [64, 96, 48][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = 1e-3 if fixed else [0.5, 0.4, 0.6][seed % 3]
    n_max, n_types, steps = 18, 6, 150

    torch.manual_seed(seed)
    model = GCNRegressor(n_types + 1, width, depth)
    # regression output starts at the (standardised) target mean
    nn.init.zeros_(model.head[-1].weight)
    nn.init.zeros_(model.head[-1].bias)

    contrib = torch.randn(n_types, generator=g)

    def prop(types, adj, mask):
        # property: atom contributions + pairwise bond terms
        c = contrib[types] * mask
        bond = (adj * (c[:, :, None] * c[:, None, :])).sum((1, 2)) / 2
        return c.sum(1) + 0.3 * bond

    raw = []
    for _ in range(steps):
        x, a_hat, mask, types, adj = random_molecules(g, batch, n_max, n_types)
        raw.append(((x, a_hat, mask), prop(types, adj, mask) + 0.05 * torch.randn(batch, generator=g)))
    # target standardisation statistics from a held-out reference set
    _, _, m_ref, t_ref, adj_ref = random_molecules(g, 2000, n_max, n_types)
    y_ref = prop(t_ref, adj_ref, m_ref)
    y_mu, y_sd = y_ref.mean(), y_ref.std()
    batches = [(inp, (y - y_mu) / y_sd) for inp, y in raw]

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": nn.SmoothL1Loss(), "batches": batches,
            "steps": steps}
