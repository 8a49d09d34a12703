"""PointNet++-style single-scale-grouping classifier on synthetic point clouds (sphere, cube
surface, cylinder, cone; 64 points, random z-rotation and scale): 16 centroids each gather their
8 nearest neighbours, a shared local PointNet MLP encodes neighbour offsets and is max-pooled
per group, a second MLP plus a global max-pool feed the class head. The network has no
BatchNorm. The training script grew out of the PyTorch MNIST example (Adadelta, lr=1.0); when
the optimiser was switched to SGD with momentum 0.9 the lr=1.0 stayed. The first updates are as
large as the weights themselves, the max-pooled features swing by orders of magnitude from step
to step and the cross-entropy climbs above its chance level (ln 4) and stays there, noisy but
finite. Fixed: lr=0.05 with the same momentum, data and init."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("PointNet++ (Qi et al. 2017) SSG set abstraction; pytorch/examples mnist main.py default "
          "lr=1.0 (meant for Adadelta) kept after switching to SGD, 'loss goes up with SGD' reports")

N_PTS, N_CENT, K = 64, 16, 8


class SetAbstraction(nn.Module):
    def __init__(self, cin, hidden, cout):
        super().__init__()
        self.local = nn.Sequential(nn.Linear(cin, hidden), nn.ReLU(), nn.Linear(hidden, cout), nn.ReLU())

    def forward(self, xyz, feats):
        cent = xyz[:, :N_CENT]                                    # points are pre-shuffled
        idx = torch.cdist(cent, xyz).topk(K, dim=-1, largest=False).indices  # (B, C, K)
        b = torch.arange(xyz.shape[0])[:, None, None]
        grouped = xyz[b, idx] - cent[:, :, None, :]               # (B, C, K, 3)
        if feats is not None:
            grouped = torch.cat([grouped, feats[b, idx]], -1)
        return cent, self.local(grouped).amax(2)                  # (B, C, cout)


class PointNet2SSG(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.sa1 = SetAbstraction(3, 32, 64)
        self.sa2 = nn.Sequential(nn.Linear(64 + 3, 64), nn.ReLU(), nn.Linear(64, 128), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, n_classes))

    def forward(self, xyz):
        cent, f = self.sa1(xyz, None)
        g = self.sa2(torch.cat([f, cent], -1)).amax(1)
        return self.head(g)


def _sample_shape(g, k, n):
    u = torch.rand(n, 2, generator=g)
    if k == 0:  # sphere
        v = torch.randn(n, 3, generator=g)
        return v / v.norm(dim=1, keepdim=True)
    if k == 1:  # cube surface
        p = torch.rand(n, 3, generator=g) * 2 - 1
        ax = torch.randint(0, 3, (n,), generator=g)
        sgn = torch.randint(0, 2, (n,), generator=g).float() * 2 - 1
        p[torch.arange(n), ax] = sgn
        return p
    th = u[:, 0] * 2 * math.pi
    z = u[:, 1] * 2 - 1
    if k == 2:  # cylinder
        return torch.stack([th.cos(), th.sin(), z], 1)
    r = (1 - z) / 2  # cone
    return torch.stack([r * th.cos(), r * th.sin(), z], 1)


def _make_data(g, n):
    xs, ys = [], []
    for i in range(n):
        k = int(torch.randint(0, 4, (1,), generator=g))
        p = _sample_shape(g, k, N_PTS)
        a = float(torch.rand(1, generator=g)) * 2 * math.pi
        rot = torch.tensor([[math.cos(a), -math.sin(a), 0.], [math.sin(a), math.cos(a), 0.], [0., 0., 1.]])
        p = p @ rot.T * (0.7 + 0.6 * float(torch.rand(1, generator=g))) + 0.02 * torch.randn(N_PTS, 3, generator=g)
        xs.append(p[torch.randperm(N_PTS, generator=g)])
        ys.append(k)
    return torch.stack(xs), torch.tensor(ys)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    x, y = _make_data(g, 384)
    steps, bs = 120, 32
    batches = [(x[(s * bs) % 384:(s * bs) % 384 + bs], y[(s * bs) % 384:(s * bs) % 384 + bs]) for s in range(steps)]
    model = PointNet2SSG()
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 1.0, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
