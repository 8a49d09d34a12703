"""A learned cloth-draping model predicts the rest-to-draped displacement of every vertex of a
garment panel mesh with a PointNet-style network (per-vertex MLP on rest position, normal and a
pinned flag, concatenated with a max-pooled global code). Its forward pass also returns the draped
edge lengths, computed in an EdgeLength module as sqrt(sum((p_i - p_j)^2)), and the loss combines a
vertex position error with an inextensibility term (edge length vs rest length). The first panels
come from meshes without seams and training is calm. Later panels were exported from OBJ files
with UV seams, where the exporter duplicates the seam vertices and the loader welds each duplicate
pair with an edge of rest length 0. The two copies have identical features, so the network predicts
identical positions for them and the weld edge has a length of exactly 0: the forward value is fine
(sqrt(0) = 0) but the backward of sqrt at 0 is inf, multiplied by the zero difference gives
0 * inf = NaN, and one RMSprop step turns every weight NaN. The fix adds the usual epsilon inside the
square root (sqrt(sum + 1e-12)); data, model and optimiser are unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "edge_len"
SOURCE = ("Known pattern: NaN gradients of torch.sqrt / manual vector norms at exactly zero "
          "(pytorch/pytorch issues on 'sqrt backward at 0 gives NaN', 'norm of zero vector "
          "gradient'); duplicated seam vertices in OBJ exports of garment meshes.")

G = 6                      # grid vertices per side of a panel
BAD_FROM = 45


class EdgeLength(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, pos, edges):
        d = pos[:, edges[0]] - pos[:, edges[1]]
        return torch.sqrt((d * d).sum(-1) + self.eps)


class DrapeNet(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.point = nn.Sequential(nn.Linear(7, 48), nn.ReLU(), nn.Linear(48, 48), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(96, 48), nn.ReLU(), nn.Linear(48, 3))
        self.edge_len = EdgeLength(eps)

    def forward(self, feats, edges):
        rest = feats[..., :3]
        h = self.point(feats)
        glob = h.max(1, keepdim=True).values.expand_as(h)
        disp = self.head(torch.cat([h, glob], -1))
        pos = rest + disp
        return {"pos": pos, "edge_len": self.edge_len(pos, edges[0])}


def _panel(g, B, seam):
    ii, jj = torch.meshgrid(torch.arange(G).float(), torch.arange(G).float(), indexing="ij")
    u, v = ii.reshape(-1) / (G - 1), jj.reshape(-1) / (G - 1)
    idx = lambda i, j: i * G + j
    e = []
    for i in range(G):
        for j in range(G):
            for di, dj in ((1, 0), (0, 1), (1, 1)):
                if i + di < G and j + dj < G:
                    e.append((idx(i, j), idx(i + di, j + dj)))
    n = G * G
    if seam:   # duplicate the vertices of the middle column (UV seam) and weld them
        dup = [idx(i, G // 2) for i in range(G)]
        u = torch.cat([u, u[dup]])
        v = torch.cat([v, v[dup]])
        for k, src in enumerate(dup):
            e.append((src, n + k))
        n = n + len(dup)
    edges = torch.tensor(e).T
    width = 0.4 + 0.2 * torch.rand(B, 1, generator=g)
    curve = 0.3 * torch.rand(B, 1, generator=g)
    rest = torch.stack([u.expand(B, -1) * width, v.expand(B, -1) * width,
                        curve * (u - 0.5).pow(2).expand(B, -1)], -1)
    normal = torch.tensor([0.0, 0.0, 1.0]).expand(B, n, 3)
    pinned = (v == 0).float().expand(B, -1).unsqueeze(-1)
    feats = torch.cat([rest, normal, pinned], -1)
    # draped target: hanging from the pinned row, sagging with distance from the pins
    sag = 0.15 * (1 - torch.cos(math.pi * v)).expand(B, -1) * (1 + torch.rand(B, 1, generator=g))
    target = rest.clone()
    target[..., 2] = target[..., 2] - sag
    target[..., 1] = target[..., 1] * (1 - 0.1 * v.expand(B, -1))
    rest_len = (rest[:, edges[0]] - rest[:, edges[1]]).norm(dim=-1)
    return (feats, edges.unsqueeze(0)), {"pos": target, "rest_len": rest_len}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5300 + seed)
    steps = 100
    batches = [_panel(g, 8, seam=(s >= BAD_FROM and s % 3 == 0)) for s in range(steps)]
    model = DrapeNet(eps=1e-12 if fixed else 0.0)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)

    def loss_fn(out, tgt):
        pos_err = ((out["pos"] - tgt["pos"]) ** 2).sum(-1).mean()
        stretch = ((out["edge_len"] - tgt["rest_len"]) ** 2).mean()
        return 10.0 * (pos_err + stretch)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
