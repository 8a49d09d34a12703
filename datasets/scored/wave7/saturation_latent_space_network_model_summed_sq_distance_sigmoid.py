"""Hoff-style latent space model for link prediction on a social/contact network: every node id gets
a learned position z_i (nn.Embedding, 48 dims, default N(0,1) init) and an edge is predicted with
probability sigmoid(alpha - ||z_i - z_j||^2), trained with binary cross-entropy on those
probabilities. The squared distance is SUMMED over the 48 latent dimensions, so at initialisation
every pair, linked or not, sits at ||z_i - z_j||^2 ~ 2*48 ~ 96: the logit is about -96 for all
samples at once and the sigmoid is flat (sigmoid' ~ 1e-42). Nothing flows back to the positions or
to alpha, not even through Adam (the gradient is far below eps), and the loss sits at its starting
value. Fix: keep the pre-activation in the sigmoid's range by averaging the squared distance over
the latent dimensions (the usual 1/d scaling)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "decoder"
SOURCE = ("Hoff, Raftery & Handcock 2002 latent space models (distance-based link logits) as used "
          "in graph-embedding link prediction; known pattern of a sigmoid fed an unnormalised "
          "sum of squared distances saturating for every pair")

N_NODES, DIM = 300, 48


class DistanceDecoder(nn.Module):
    def __init__(self, mean_over_dims):
        super().__init__()
        self.alpha = nn.Parameter(torch.zeros(()))
        self.mean_over_dims = mean_over_dims

    def forward(self, zi, zj):
        d2 = (zi - zj).pow(2)
        d2 = d2.mean(-1) if self.mean_over_dims else d2.sum(-1)
        return torch.sigmoid(self.alpha - d2)


class LatentSpaceModel(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.pos = nn.Embedding(N_NODES, DIM)
        self.decoder = DistanceDecoder(mean_over_dims=fixed)

    def forward(self, src, dst):
        return self.decoder(self.pos(src), self.pos(dst))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 150, 256
    # ground-truth network: nodes in a few communities on a 2-D plane, links more likely when close
    centres = 3.0 * torch.randn(6, 2, generator=g)
    comm = torch.randint(0, 6, (N_NODES,), generator=g)
    true_pos = centres[comm] + 0.8 * torch.randn(N_NODES, 2, generator=g)
    d2 = torch.cdist(true_pos, true_pos).pow(2)
    adj = (torch.rand(N_NODES, N_NODES, generator=g) < torch.sigmoid(2.0 - d2)).float()
    adj = torch.triu(adj, 1); adj = adj + adj.t()
    edges = adj.nonzero()
    batches = []
    for _ in range(steps):
        # half observed links, half random pairs (labelled from the adjacency)
        e = edges[torch.randint(0, edges.shape[0], (bs // 2,), generator=g)]
        rs = torch.randint(0, N_NODES, (bs // 2,), generator=g)
        rd = torch.randint(0, N_NODES, (bs // 2,), generator=g)
        src = torch.cat([e[:, 0], rs]); dst = torch.cat([e[:, 1], rd])
        y = adj[src, dst]
        batches.append(((src, dst), y))
    model = LatentSpaceModel(fixed)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    return dict(model=model, optimizer=opt, loss_fn=F.binary_cross_entropy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
