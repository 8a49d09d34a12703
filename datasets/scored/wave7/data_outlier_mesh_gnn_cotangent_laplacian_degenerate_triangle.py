"""Mesh GNN for denoising a scalar field on triangle meshes (height-field patches, 7x7 vertices,
4 meshes per batch): node inputs are (noisy value, height), each block mixes a node's state with
its cotangent-weighted Laplacian (sum_j w_ij (h_j - h_i) / sum_j w_ij, w_ij = (cot a + cot b) /
2 precomputed per mesh in the data pipeline) through a small MLP, and the head regresses the
clean value per vertex. The weights are computed from the raw vertex positions; one scan in the
data set has a collapsed edge (two vertices at the same position, a classic merge-by-distance
artefact), so its zero-area triangles give cot = x / |0| = inf and 0/0 = NaN edge weights.
Training is calm until that mesh's batch arrives at step 45; the first message-passing block
turns the non-finite weights into non-finite node states and the loss is NaN from there on (Adam
then spreads NaN into every parameter). Fixed: that mesh is filtered out and replaced by a clean
one; the model, optimiser and other batches are unchanged."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "blocks.0"
SOURCE = ("Cotangent Laplacian on degenerate triangles (libigl/PyMesh docs on zero-area faces; "
          "'NaN in cotangent weights' reports in mesh-learning repos, e.g. MeshCNN/DiffusionNet "
          "preprocessing needing degenerate-face removal)")

G = 7


class LaplacianBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(2 * d, d), nn.Tanh(), nn.Linear(d, d))

    def forward(self, h, edge_index, w):
        src, dst = edge_index
        num = torch.zeros_like(h).index_add_(0, dst, w[:, None] * (h[src] - h[dst]))
        den = torch.zeros(h.shape[0]).index_add_(0, dst, w)
        lap = num / den[:, None]
        return h + self.mlp(torch.cat([h, lap], -1))


class MeshDenoiser(nn.Module):
    def __init__(self, d=24):
        super().__init__()
        self.embed = nn.Linear(2, d)
        self.blocks = nn.ModuleList([LaplacianBlock(d) for _ in range(3)])
        self.head = nn.Linear(d, 1)

    def forward(self, x, edge_index, w):
        h = self.embed(x)
        for b in self.blocks:
            h = b(h, edge_index, w)
        return self.head(h).squeeze(-1)


def _faces():
    f = []
    for r in range(G - 1):
        for c in range(G - 1):
            a, b, d, e = r * G + c, r * G + c + 1, (r + 1) * G + c, (r + 1) * G + c + 1
            f += [(a, b, e), (a, e, d)]
    return torch.tensor(f)


FACES = _faces()


def _cot_weights(pos):
    w = {}
    for tri in FACES.tolist():
        for k in range(3):
            i, j, o = tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]
            u, v = pos[i] - pos[o], pos[j] - pos[o]
            cot = (u * v).sum() / torch.linalg.cross(u, v).norm()
            for a, b in ((i, j), (j, i)):
                w[(a, b)] = w.get((a, b), 0.0) + 0.5 * cot
    keys = sorted(w)
    ei = torch.tensor(keys).T
    return ei, torch.stack([torch.as_tensor(w[k]) for k in keys]).float()


def _mesh(g, collapse=False):
    lin = torch.linspace(0, 1, G)
    yy, xx = torch.meshgrid(lin, lin, indexing="ij")
    xy = torch.stack([xx, yy], -1).reshape(-1, 2) + 0.03 * torch.randn(G * G, 2, generator=g)
    a = torch.rand(3, generator=g)
    z = 0.3 * torch.sin(3 * xy[:, 0] + 6 * a[0]) * torch.cos(2 * xy[:, 1] + 6 * a[1])
    pos = torch.cat([xy, z[:, None]], 1)
    if collapse:
        pos[3 * G + 3] = pos[3 * G + 4]  # merge-by-distance artefact: edge collapsed to a point
    ei, w = _cot_weights(pos)
    clean = torch.sin(4 * xy[:, 0] + 6 * a[2]) + 2 * z
    noisy = clean + 0.4 * torch.randn(G * G, generator=g)
    return torch.stack([noisy, z], 1), ei, w, clean


def _collate(meshes):
    xs, eis, ws, ys, off = [], [], [], [], 0
    for x, ei, w, y in meshes:
        xs.append(x); eis.append(ei + off); ws.append(w); ys.append(y); off += x.shape[0]
    return (torch.cat(xs), torch.cat(eis, 1), torch.cat(ws)), torch.cat(ys)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9000 + seed)
    pool = [_mesh(g) for _ in range(48)]
    bad = _mesh(g, collapse=not fixed)  # fixed: the same slot holds a clean mesh
    steps, per = 100, 4
    batches = []
    for s in range(steps):
        ms = [pool[(s * per + k) % len(pool)] for k in range(per)]
        if s == 45:
            ms[2] = bad
        batches.append(_collate(ms))
    model = MeshDenoiser()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
