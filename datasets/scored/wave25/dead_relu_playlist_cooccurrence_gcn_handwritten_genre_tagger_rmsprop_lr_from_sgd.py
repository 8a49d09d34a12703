"""Music catalogue genre tagging with a hand-written GCN over the track co-occurrence
graph (two tracks are linked when they appear in the same user playlists; symmetric
normalised adjacency D^-1/2 (A+I) D^-1/2).  Node features are audio descriptors
(mel-band energy means, chroma energies, tag frequencies -- non-negative); layers are
``H' = ReLU(A_hat H W)``; the head predicts the genre; cross-entropy, RMSprop.
Each step trains on one sampled cluster subgraph (Cluster-GCN style).

Mechanism: the node features are non-negative (mel-band energies, tag frequencies), and
the learning rate was copied from the SGD baseline of the same repo (0.18-0.25) into
``torch.optim.RMSprop``.  RMSprop's first steps divide the gradient by
sqrt((1 - alpha) g^2) = 0.1 |g|, so every weight moves by ~10 x lr ~ 2 in one step.
Because the inputs are all >= 0, the gradient of a unit's weight row (delta_j * x) has
one sign across the row, so a unit that is pushed down is pushed down for every node
at once.  The first updates overshoot (the loss spikes by orders of magnitude for a
few steps) and in that turmoil 70-100% of the ``gc1`` units and nearly all units of the
last GCN layer end up negative for every node; ReLU passes no gradient there, the
neighbourhood averaging gives no node a positive input to revive them, and the
cross-entropy settles on the ln(8) plateau of a constant prediction for the rest of the
run.  No NaN.

ORIGIN: ``gc1`` -- the first hidden GCN layer, whose units die first (it sees the
non-negative raw features) and whose death starves everything above it.

Fix: the RMSprop learning rate in its usual range (20x lower, ~1e-2); nothing else
changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "gc1"
SOURCE = ("Kipf & Welling 2017 GCN written by hand for playlist/track graphs (e.g. Spotify "
          "Million Playlist Dataset co-occurrence graphs); 'dying ReLU after switching "
          "SGD->RMSprop without changing lr' (Keras/PyTorch forum reports).")

N_GENRES = 8
D_IN = 24


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, h, a_hat):
        return a_hat @ self.lin(h)


class PlaylistGCN(nn.Module):
    def __init__(self, hidden, depth):
        super().__init__()
        self.gc1 = GraphConv(D_IN, hidden)
        self.gcs = nn.ModuleList([GraphConv(hidden, hidden) for _ in range(depth - 1)])
        self.head = nn.Linear(hidden, N_GENRES)

    def forward(self, x, a_hat):
        h = F.relu(self.gc1(x, a_hat))
        for gc in self.gcs:
            h = F.relu(gc(h, a_hat))
        return self.head(h)


def _cluster(g, n, centroids, proj):
    y = torch.randint(0, N_GENRES, (n,), generator=g)
    x = centroids[y] + 0.9 * torch.randn(n, 6, generator=g)
    feats = torch.tanh(x @ proj) + 0.3 * torch.randn(n, D_IN, generator=g)
    same = (y[:, None] == y[None, :]).float()
    p = 0.12 * same + 0.01
    a = (torch.rand(n, n, generator=g) < p).float()
    a = torch.triu(a, 1)
    a = a + a.t() + torch.eye(n)
    dinv = a.sum(1).rsqrt()
    a_hat = dinv[:, None] * a * dinv[None, :]
    feats = F.softplus(2.0 * feats)  # mel-band energies / tag frequencies: non-negative
    return (feats, a_hat), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(808 + seed)
    hidden = [32, 48, 40][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.2, 0.25, 0.18][seed % 3]
    if fixed:
        lr = lr / 20
    n_nodes = [160, 128, 192][seed % 3]
    steps = 200
    centroids = 1.5 * torch.randn(N_GENRES, 6, generator=g)
    proj = torch.randn(6, D_IN, generator=g)

    model = PlaylistGCN(hidden, depth)
    batches = [_cluster(g, n_nodes, centroids, proj) for _ in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
