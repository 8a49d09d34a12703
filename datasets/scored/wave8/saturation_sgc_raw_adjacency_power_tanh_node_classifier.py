"""Simplified Graph Convolution (SGC, Wu et al. 2019) node classifier on a citation-style graph:
bag-of-words node features are propagated K=3 hops and fed to a small tanh MLP (Adam). The SGC
recipe propagates with the normalised operator S = D^-1/2 (A+I) D^-1/2; the author builds the
propagation module with the raw adjacency plus self loops, (A+I)^3 X. Raw powers multiply feature
magnitudes by roughly (degree+1)^3 (~2e3 here; tanh pre-activations ~200), and because bag-of-words features are
non-negative the propagated vectors are dominated by a large common positive component. Every
unit of the tanh layer (mlp.1) therefore sits deep in saturation with the same sign for every
node, its derivative is ~0 so mlp.0 receives no gradient, and the output layer only sees a
constant +-1 code: the cross-entropy stays at the class-prior level, finite throughout. The
fix uses the symmetric normalisation D^-1/2 (A+I) D^-1/2 (pre-activations of order 1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "mlp.1"
SOURCE = ("SGC (Wu et al. 2019, 'Simplifying Graph Convolutional Networks') and GCN (Kipf & "
          "Welling 2017) require the renormalised adjacency; issues about unnormalised "
          "adjacency powers giving huge features and a model stuck at chance.")

N, F_IN, K_CLS, HOPS = 300, 64, 4, 3


class Propagate(nn.Module):
    def __init__(self, adj, normalise):
        super().__init__()
        a = adj + torch.eye(adj.shape[0])
        if normalise:
            d = a.sum(1).pow(-0.5)
            a = d[:, None] * a * d[None, :]
        self.register_buffer("op", a)

    def forward(self, x):
        for _ in range(HOPS):
            x = self.op @ x
        return x


class SGC(nn.Module):
    def __init__(self, adj, normalise):
        super().__init__()
        self.prop = Propagate(adj, normalise)
        self.mlp = nn.Sequential(nn.Linear(F_IN, 32), nn.Tanh(), nn.Linear(32, K_CLS))

    def forward(self, x, idx):
        return self.mlp(self.prop(x)[idx])


def make_graph(g):
    labels = torch.randint(0, K_CLS, (N,), generator=g)
    same = labels[:, None] == labels[None, :]
    p = torch.where(same, torch.tensor(0.08), torch.tensor(0.025))
    adj = (torch.rand(N, N, generator=g) < p).float()
    adj = torch.triu(adj, 1)
    adj = adj + adj.t()
    # bag-of-words counts: background words + a few class-indicative words
    rates = torch.full((K_CLS, F_IN), 0.15)
    for c in range(K_CLS):
        rates[c, c * 8:(c + 1) * 8] = 0.45
    x = torch.poisson(rates[labels], generator=g)
    return adj, x, labels


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    adj, x, labels = make_graph(g)
    model = SGC(adj, normalise=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    train = torch.randperm(N, generator=g)[:200]
    steps = 100
    batches = []
    for _ in range(steps):
        idx = train[torch.randperm(200, generator=g)[:64]]
        batches.append(((x, idx), labels[idx]))

    def loss_fn(out, y):
        return F.cross_entropy(out, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
