"""PointNet++-lite part segmentation of RGB-D tabletop scans under fp16 autocast: a set-abstraction
layer (kNN grouping around sampled centroids, shared MLP, max pool) and a feature-propagation
layer (3-NN inverse-distance interpolation back to all points), then a per-point classifier.

Mechanism: pairwise squared distances for the kNN grouping and for the 3-NN interpolation are
computed the usual pure-PyTorch way, |a|^2 + |b|^2 - 2 a.b^T, and the a.b^T matmul runs in
float16 under autocast.  The points are in the camera frame in centimetres, as the capture tool
exports them.  For a table at 1-1.5 m every dot product is below 65504, but scans taken from
further back (depth beyond ~2.4 m, a fraction of the data) give a.b^T > 65504: the matmul
returns inf, the squared distances become -inf, the kNN picks garbage, the inverse-distance
weights 1/(d + 1e-8) are all -0 and their normalisation is 0/0 = NaN, so the per-point logits
and the loss are NaN at the first such batch (its step varies with the seed).  No GradScaler can help:
the overflow is in the forward pass.

ORIGIN: "sa" - the set-abstraction layer's kNN distance matmul is the first op whose fp16
output passes 65504 (the feature-propagation layer "fp" then repeats it).

Fix: compute the pairwise distances in float32 (autocast disabled for that op, as the CUDA
kernels of PointNet++ do); the rest of the model still runs under fp16 autocast.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "sa"
SOURCE = ("Qi et al., PointNet++ (NeurIPS 2017) three_nn / three_interpolate; pure-PyTorch ports "
          "(square_distance = -2 a.b^T + |a|^2 + |b|^2) run under AMP give inf/NaN for large "
          "coordinates (Pointnet_Pointnet2_pytorch issues on NaN with amp / unnormalised xyz)")


def square_distance(a, b, fp32):
    # as in the pure-PyTorch PointNet++ ports: -2 a.b^T + |a|^2 + |b|^2 (no clamp)
    if fp32:
        with torch.autocast(device_type="cpu", enabled=False):
            a, b = a.float(), b.float()
            return -2 * a @ b.transpose(1, 2) + (a ** 2).sum(-1, keepdim=True) + \
                (b ** 2).sum(-1)[:, None]
    return -2 * a @ b.transpose(1, 2) + (a ** 2).sum(-1, keepdim=True) + (b ** 2).sum(-1)[:, None]


class SetAbstraction(nn.Module):
    def __init__(self, m, k, radius_cm, width, fp32):
        super().__init__()
        self.m, self.k, self.r, self.fp32 = m, k, radius_cm, fp32
        self.mlp = nn.Sequential(nn.Linear(3, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())

    def forward(self, xyz):
        cen = xyz[:, : self.m]                                   # points are pre-shuffled
        d = square_distance(cen, xyz, self.fp32)                 # (B, M, N)
        idx = d.topk(self.k, dim=-1, largest=False).indices
        b = torch.arange(xyz.shape[0])[:, None, None]
        rel = (xyz[b, idx] - cen[:, :, None]) / self.r           # local, radius-normalised
        return cen, self.mlp(rel).max(dim=2).values


class FeaturePropagation(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32

    def forward(self, xyz, cen, feat):
        d = square_distance(xyz, cen, self.fp32)                 # (B, N, M)
        dist, idx = d.topk(3, dim=-1, largest=False)
        w = 1.0 / (dist + 1e-8)
        w = w / w.sum(-1, keepdim=True)
        b = torch.arange(xyz.shape[0])[:, None, None]
        return (feat[b, idx] * w[..., None]).sum(2)


class PointNet2Seg(nn.Module):
    def __init__(self, m, k, width, n_cls, fp32):
        super().__init__()
        self.sa = SetAbstraction(m, k, 10.0, width, fp32)
        self.fp = FeaturePropagation(fp32)
        self.head = nn.Sequential(nn.Linear(width + 1, width), nn.ReLU(), nn.Linear(width, n_cls))

    def forward(self, xyz):
        cen, feat = self.sa(xyz)
        up = self.fp(xyz, cen, feat)
        height = (xyz[..., 1:2] - xyz[..., 1:2].mean(1, keepdim=True)) / 10.0
        return self.head(torch.cat([up, height], -1)).transpose(1, 2)   # (B, C, N)


def _scene(g, n, npts, far):
    # table plane + a box + a sphere, camera frame in cm (x right, y down, z forward)
    pts, lab = [], []
    for i in range(n):
        z0 = (230.0 + 40.0 * torch.rand(1, generator=g)) if far[i] else \
             (100.0 + 50.0 * torch.rand(1, generator=g))
        n_t, n_b = npts // 2, npts // 4
        n_s = npts - n_t - n_b
        tx = (torch.rand(n_t, generator=g) - 0.5) * 80
        tz = z0 + (torch.rand(n_t, generator=g) - 0.5) * 60
        table = torch.stack([tx, torch.full((n_t,), 30.0), tz], 1)
        bc = torch.tensor([-15.0, 22.0, 0.0]) + torch.cat([torch.zeros(2), z0])
        box = bc + (torch.rand(n_b, 3, generator=g) - 0.5) * torch.tensor([12.0, 16.0, 12.0])
        sd = torch.randn(n_s, 3, generator=g)
        sph = torch.tensor([15.0, 24.0, 0.0]) + torch.cat([torch.zeros(2), z0]) + \
            6.0 * sd / sd.norm(dim=1, keepdim=True)
        p = torch.cat([table, box, sph]) + 0.3 * torch.randn(npts, 3, generator=g)
        l = torch.cat([torch.zeros(n_t), torch.ones(n_b), torch.full((n_s,), 2.0)]).long()
        perm = torch.randperm(npts, generator=g)
        pts.append(p[perm])
        lab.append(l[perm])
    return torch.stack(pts), torch.stack(lab)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [32, 48, 64][seed % 3]
    m = [16, 24, 16][seed % 3]
    k = [8, 8, 12][seed % 3]
    batch = [6, 8, 4][seed % 3]
    lr = [2e-3, 1.5e-3, 3e-3][seed % 3]
    first_far = [23, 41, 12][seed % 3]
    steps, npts, n_cls = 100, 96, 3
    model = PointNet2Seg(m, k, width, n_cls, fp32=fixed)
    batches = []
    for t in range(steps):
        far = (torch.rand(batch, generator=g) < 0.25) & torch.tensor(t >= first_far)
        if t == first_far:
            far[0] = True
        batches.append(_scene(g, batch, npts, far.tolist()))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": F.cross_entropy, "batches": batches,
            "steps": steps, "amp_dtype": torch.float16, "scaler": None}
