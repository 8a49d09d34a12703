"""Poincare embeddings of a taxonomy (Nickel & Kiela 2017) with an epsilon-free ball distance.

Mechanism. Each node of a tree-shaped taxonomy (a synthetic WordNet-noun-like hierarchy,
transitive closure of is-a) gets a point in the Poincare ball, initialised uniformly in
[-1e-3, 1e-3], and trained with Adam (as many re-implementations do instead of Riemannian SGD)
on the paper's soft ranking loss: for each (u, v) is-a pair,
cross-entropy over ``-d(u, v)`` against ``-d(u, v')`` for sampled non-neighbours v', with the
Poincare distance ``d(u, v) = arcosh(1 + 2 |u - v|^2 / ((1 - |u|^2)(1 - |v|^2)))``. Points are
kept in the ball by a projection in the forward pass that rescales any row with norm >= 1 back
to norm 1 (``x / max(|x|, 1)``), as naive re-implementations do. The distance module computes
``1 - |u|^2`` with no clamp: facebookresearch/poincare-embeddings clamps the squared norm to
``1 - eps`` (eps = 1e-5) inside its distance, and geoopt keeps float32 points 4e-3 inside the
boundary, precisely because of this.

The run is calm while the points spread out from the origin. The loss pushes leaves towards the
boundary (that is what hyperbolic embeddings of hierarchies do); the first rows that cross norm
1 are projected onto the sphere, where ``1 - |u|^2`` is exactly 0.0 or a rounding-sized
negative number in float32. The distance then divides by zero (argument +inf; as the logit of a
negative, -inf even leaves the loss finite for that step while its backward is NaN and poisons
the weights) or takes arcosh of a number below 1 (NaN): the loss turns NaN at a seed-dependent
step (35-58) after tens of finite ones.

ORIGIN = "dist": the module holding the unsafe division (and arcosh); the embedding and the
projection outputs are finite (norm exactly 1 is a valid float), the first non-finite tensor
is the distance.

fixed=True: the same model, data and optimizer; only the distance clamps ``1 - |u|^2`` with
``clamp_min(1e-5)`` (the reference implementation's epsilon).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "dist"
SOURCE = (
    "Nickel & Kiela 2017 Poincare embeddings (facebookresearch/poincare-embeddings clamps the "
    "squared norm to 1 - eps in PoincareDistance; geoopt keeps float32 points 4e-3 inside the "
    "ball); naive re-implementations projecting onto |x| = 1 with no eps get inf/NaN distances"
)


class BallProjection(nn.Module):
    def forward(self, x):
        return x / x.norm(dim=-1, keepdim=True).clamp_min(1.0)


class PoincareDistance(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, u, v):
        sq_u = (u * u).sum(-1)
        sq_v = (v * v).sum(-1)
        a = 1 - sq_u
        b = 1 - sq_v
        if self.eps > 0:
            a = a.clamp_min(self.eps)
            b = b.clamp_min(self.eps)
        x = 1 + 2 * ((u - v) ** 2).sum(-1) / (a * b)
        return torch.acosh(x)


class PoincareEmbedding(nn.Module):
    def __init__(self, n_nodes: int, dim: int, eps: float):
        super().__init__()
        self.lt = nn.Embedding(n_nodes, dim)
        nn.init.uniform_(self.lt.weight, -1e-3, 1e-3)
        self.ball = BallProjection()
        self.dist = PoincareDistance(eps)

    def forward(self, anchors, candidates):
        u = self.ball(self.lt(anchors)).unsqueeze(1)   # (B, 1, d)
        v = self.ball(self.lt(candidates))             # (B, 1 + K, d); column 0 is the positive
        return -self.dist(u, v)                        # logits


def ranking_loss(logits, target):
    return F.cross_entropy(logits, target)


def _tree(branching, depth):
    parent = [-1]
    frontier = [0]
    for _ in range(depth):
        nxt = []
        for p in frontier:
            for _ in range(branching):
                parent.append(p)
                nxt.append(len(parent) - 1)
        frontier = nxt
    return parent


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(77 + seed)
    branching, depth = (3, 4) if seed != 1 else (4, 3)
    parent = _tree(branching, depth)
    n = len(parent)
    ancestors = []
    for i in range(n):
        anc, p = set(), parent[i]
        while p >= 0:
            anc.add(p)
            p = parent[p]
        ancestors.append(anc)
    related = torch.zeros(n, n, dtype=torch.bool)
    pairs = []
    for i in range(n):
        related[i, i] = True
        for a in ancestors[i]:
            pairs.append((i, a))
            related[i, a] = related[a, i] = True
    pairs = torch.tensor(pairs)
    batch, n_neg, steps = 32, 10, 200
    batches = []
    for _ in range(steps):
        sel = pairs[torch.randint(0, len(pairs), (batch,), generator=g)]
        u, v = sel[:, 0], sel[:, 1]
        # rejection-sample negatives that are not related to the anchor
        neg = torch.randint(0, n, (batch, n_neg * 3), generator=g)
        ok = ~related[u[:, None], neg]
        order = torch.argsort((~ok).float() + torch.rand(neg.shape, generator=g) * 0.5, dim=1)
        neg = neg.gather(1, order)[:, :n_neg]
        cands = torch.cat([v[:, None], neg], dim=1)
        batches.append(((u, cands), torch.zeros(batch, dtype=torch.long)))

    torch.manual_seed(seed)
    model = PoincareEmbedding(n, dim=5, eps=1e-5 if fixed else 0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01 + 0.003 * seed)
    return dict(
        model=model,
        optimizer=optimizer,
        loss_fn=ranking_loss,
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
