"""Spatial-lag graph network for county-level outcomes (spatial econometrics meets GNNs): for a
mini-batch of counties and their induced contiguity graph, each layer mixes a county's hidden
state with the spatially lagged hidden states W h, where W is the ROW-STANDARDISED contiguity
matrix (W = A / rowsum(A), as in a SAR / SLX model), then a head predicts the standardised
opioid-overdose mortality rate; MSE, AdamW.

Mechanism (unsafe_op). Row standardisation is written `A / A.sum(1, keepdim=True)` with no
guard. Counties with no contiguous neighbour in the batch -- island counties (e.g. Nantucket,
Dukes, San Juan, the Hawaii counties), which PySAL flags as 'islands' -- have a zero row sum,
so their row of W is 0/0 = NaN. Most batches are sampled from connected regions and the run is
calm; the first batch that contains an island county (its step depends on the seed) turns that
county's lagged state into NaN, the loss is NaN and AdamW spreads NaN into every weight.

ORIGIN = "lag1": the first spatial-lag layer, where the 0/0 division happens.

Fix: guard the division (`A / A.sum(1, keepdim=True).clamp_min(1)`), which gives islands a zero
spatial lag, the convention of spatial-econometrics software. Same data, model and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "lag1"
SOURCE = ("Row-standardised spatial weights with island (zero-neighbour) units: PySAL "
          "'There are N disconnected components / islands' warning, 0/0 in W = A/rowsum(A); "
          "GNN spatial-lag models (e.g. Klemmer et al. / spatial GNN literature)")


class SpatialLag(nn.Module):
    def __init__(self, d_in, d_out, safe):
        super().__init__()
        self.self_lin = nn.Linear(d_in, d_out)
        self.lag_lin = nn.Linear(d_in, d_out, bias=False)
        self.safe = safe

    def forward(self, h, A):
        deg = A.sum(1, keepdim=True)
        W = A / deg.clamp_min(1.0) if self.safe else A / deg
        return torch.relu(self.self_lin(h) + self.lag_lin(W @ h))


class SpatialLagGNN(nn.Module):
    def __init__(self, d_in, width, n_layers, safe):
        super().__init__()
        self.lag1 = SpatialLag(d_in, width, safe)
        self.more = nn.ModuleList([SpatialLag(width, width, safe) for _ in range(n_layers - 1)])
        self.head = nn.Linear(width, 1)

    def forward(self, x, A):
        h = self.lag1(x, A)
        for layer in self.more:
            h = layer(h, A)
        return self.head(h).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [32, 48, 64][seed % 3]
    n_layers = [2, 3, 2][seed % 3]
    lr = [3e-3, 2e-3, 5e-3][seed % 3]
    n_nodes = [64, 96, 80][seed % 3]
    island_step = [57, 23, 88][seed % 3]
    steps = 120
    D = 7
    side = 40                                                   # counties on a 40 x 40 lattice

    model = SpatialLagGNN(D, width, n_layers, safe=fixed)
    coords = torch.stack(torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij"),
                         -1).reshape(-1, 2)
    N = side * side
    X = torch.randn(N, D, generator=g)
    beta = torch.randn(D, generator=g) * 0.5
    Afull = ((coords[:, None, :] - coords[None, :, :]).abs().sum(-1) == 1).float()
    smooth = X @ beta
    for _ in range(2):
        smooth = 0.5 * smooth + 0.5 * (Afull @ smooth) / Afull.sum(1)
    Y = smooth / smooth.std() + 0.3 * torch.randn(N, generator=g)

    def sample(with_island):
        # a connected window of the lattice (a "region"), optionally plus one island county
        r0, c0 = torch.randint(0, side - 10, (2,), generator=g).tolist()
        k = 10
        idx = (coords[:, 0] >= r0) & (coords[:, 0] < r0 + k) & (coords[:, 1] >= c0) & (coords[:, 1] < c0 + k)
        idx = idx.nonzero().squeeze(1)
        idx = idx[torch.randperm(len(idx), generator=g)[:n_nodes]]
        A = Afull[idx][:, idx].clone()
        x, y = X[idx], Y[idx]
        if with_island:
            x = torch.cat([x, torch.randn(1, D, generator=g)])
            y = torch.cat([y, torch.randn(1, generator=g)])
            A = torch.cat([torch.cat([A, torch.zeros(len(idx), 1)], 1), torch.zeros(1, len(idx) + 1)])
        # isolated lattice counties inside the window are connected to their nearest sampled one
        deg = A.sum(1)
        for i in (deg == 0).nonzero().squeeze(1).tolist():
            if with_island and i == A.shape[0] - 1:
                continue
            j = 0 if i != 0 else 1
            A[i, j] = A[j, i] = 1.0
        return (x, A), y

    batches = [sample(t == island_step) for t in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
