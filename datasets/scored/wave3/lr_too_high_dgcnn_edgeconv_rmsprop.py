"""DGCNN-style point-cloud classifier: an EdgeConv layer builds k-NN edge features
[x_i, x_j - x_i] on the raw 3-D points, runs them through a shared MLP and max-pools over the
neighbours; a second EdgeConv on the learned features is followed by a global max-pool and a
classification MLP. The run uses RMSprop with the learning rate 0.1 copied from an SGD recipe
(RMSprop divides by the running RMS of the gradient, so every parameter moves by ~lr per step,
i.e. update/weight ratios of 10-100%). The first few updates overshoot so far that the shared edge
MLPs are knocked into a regime where the max-pooled features no longer separate the shapes, and the
cross-entropy oscillates around log(4) for the rest of the run without any NaN. Fixed: lr 1e-3."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "DGCNN (Wang et al. 2019) reimplementations; 'RMSprop/Adam with SGD learning rate diverges' reports on PyTorch forums"

def knn_edges(x, k):
    d = torch.cdist(x, x)
    idx = d.topk(k, dim=-1, largest=False).indices
    nb = torch.gather(x.unsqueeze(1).expand(-1, x.shape[1], -1, -1), 2,
                      idx.unsqueeze(-1).expand(-1, -1, -1, x.shape[-1]))
    ctr = x.unsqueeze(2).expand_as(nb)
    return torch.cat([ctr, nb - ctr], dim=-1)

class EdgeConv(nn.Module):
    def __init__(self, fin, fout, k):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(2 * fin, fout), nn.ReLU(), nn.Linear(fout, fout), nn.ReLU())
        self.k = k
    def forward(self, x):
        return self.mlp(knn_edges(x, self.k)).max(dim=2).values

class DGCNN(nn.Module):
    def __init__(self, hid, k, ncls):
        super().__init__()
        self.ec1 = EdgeConv(3, hid, k)
        self.ec2 = EdgeConv(hid, hid, k)
        self.cls = nn.Sequential(nn.Linear(2 * hid, hid), nn.ReLU(), nn.Linear(hid, ncls))
    def forward(self, pts):
        h1 = self.ec1(pts); h2 = self.ec2(h1)
        return self.cls(torch.cat([h1, h2], -1).max(dim=1).values)

def shapes(n, npts, g):
    cls = torch.randint(0, 4, (n,), generator=g)
    u = torch.randn(n, npts, 3, generator=g)
    pts = torch.empty_like(u)
    sph = u / u.norm(dim=-1, keepdim=True)
    cube = u.clamp(-1, 1); cube = cube / cube.abs().max(-1, keepdim=True).values
    cyl = torch.cat([sph[..., :2] / sph[..., :2].norm(dim=-1, keepdim=True), u[..., 2:].clamp(-1, 1)], -1)
    ell = sph * torch.tensor([1.6, 0.8, 0.5])
    for c, s in enumerate([sph, cube, cyl, ell]):
        pts[cls == c] = s[cls == c]
    pts = pts + 0.03 * torch.randn(pts.shape, generator=g)
    return pts, cls

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    hid, k, npts, bs, steps = [(32, 8, 48, 16, 60), (24, 6, 64, 12, 90), (40, 10, 40, 20, 70)][seed]
    model = DGCNN(hid, k, 4)
    data = [shapes(bs, npts, g) for _ in range(10)]
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3 if fixed else [0.1, 0.2, 0.05][seed])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
