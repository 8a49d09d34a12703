"""PointNet++ (single-scale grouping) shape classifier with its BatchNorm
layers stripped (tiny batches), trained with Adam -- but at the lr of the SGD
recipe it was copied from (lr 0.2-0.3 instead of ~1e-3).

Mechanism: the global set-abstraction layer ends in a max-pool over points of
ReLU features, so the input of the classifier head is a strictly non-negative
vector.  Without BN in front of ``head.1`` (the ReLU after the first FC), every
Adam step moves each weight of ``head.0`` by ~lr, and because the inputs are
all >= 0 this shifts each hidden unit's pre-activation in the same direction
for every cloud.  After a burst of overshooting steps every unit of ``head.1``
is negative for every input: the head outputs a constant (the final layer
starts at zero, i.e. the uniform prediction), no gradient reaches the
set-abstraction layers and the cross-entropy stays at ~ln 4 for the rest of
the run.

ORIGIN: ``head.1`` -- the ReLU after the first fully connected layer of the
classifier head, the first layer whose units are all dead.

Fix: an Adam-sized lr (0.002), everything else unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = ("PointNet++ (Qi et al., NeurIPS 2017) PyTorch ports; issues 'accuracy stuck at 1/num_classes, "
          "same prediction for every cloud' after removing BatchNorm and switching SGD -> Adam without "
          "changing the learning rate")


def group(xyz, feats, n_centroids, k):
    # xyz: (B, N, 3); centroids = first n points of a pre-shuffled cloud (cheap stand-in for FPS)
    cen = xyz[:, :n_centroids]
    d = torch.cdist(cen, xyz)
    idx = d.topk(k, dim=-1, largest=False)[1]  # (B, S, k)
    b = torch.arange(xyz.size(0)).view(-1, 1, 1)
    rel = xyz[b, idx] - cen[:, :, None, :]
    if feats is not None:
        rel = torch.cat([rel, feats[b, idx]], dim=-1)
    return cen, rel  # (B, S, k, C)


class SetAbstraction(nn.Module):
    def __init__(self, d_in, widths):
        super().__init__()
        layers = []
        for w in widths:
            layers += [nn.Linear(d_in, w), nn.ReLU()]
            d_in = w
        self.mlp = nn.Sequential(*layers)

    def forward(self, grouped):
        return self.mlp(grouped).max(dim=-2)[0]


class PointNet2SSG(nn.Module):
    def __init__(self, w1, w2, n_centroids, k, num_classes):
        super().__init__()
        self.n_centroids, self.k = n_centroids, k
        self.sa1 = SetAbstraction(3, w1)
        self.sa2 = SetAbstraction(3 + w1[-1], w2)  # group-all layer
        self.head = nn.Sequential(nn.Linear(w2[-1], 64), nn.ReLU(), nn.Linear(64, num_classes))
        nn.init.zeros_(self.head[2].weight)
        nn.init.zeros_(self.head[2].bias)

    def forward(self, xyz):
        cen, grouped = group(xyz, None, self.n_centroids, self.k)
        f1 = self.sa1(grouped)  # (B, S, C1)
        g = torch.cat([cen, f1], dim=-1)[:, None]  # group all
        f2 = self.sa2(g).squeeze(1)
        return self.head(f2)


def sample_shape(cls, n, g):
    u = torch.rand(n, generator=g) * 2 * math.pi
    v = torch.rand(n, generator=g) * 2 - 1
    if cls == 0:  # ball
        p = torch.randn(n, 3, generator=g); p = p / p.norm(dim=1, keepdim=True)
    elif cls == 1:  # rod
        p = torch.stack([0.15 * torch.cos(u), 0.15 * torch.sin(u), v * 1.5], 1)
    elif cls == 2:  # disk
        r = torch.rand(n, generator=g).sqrt() * 1.2
        p = torch.stack([r * torch.cos(u), r * torch.sin(u), 0.05 * v], 1)
    else:  # cube shell
        p = torch.rand(n, 3, generator=g) * 2 - 1
        ax = torch.randint(0, 3, (n,), generator=g)
        p[torch.arange(n), ax] = torch.sign(p[torch.arange(n), ax])
    q, _ = torch.linalg.qr(torch.randn(3, 3, generator=g))
    return p @ q + 0.02 * torch.randn(n, 3, generator=g)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(w1=[32, 32], w2=[64, 128], s=24, k=8, n=96, bs=16, lr=0.2),
        dict(w1=[24, 48], w2=[64, 96], s=32, k=6, n=80, bs=12, lr=0.25),
        dict(w1=[32], w2=[64, 64, 128], s=16, k=10, n=64, bs=24, lr=0.3),
    ][seed % 3]
    g = torch.Generator().manual_seed(6000 + seed)
    num_classes, steps = 4, 90
    batches = []
    for _ in range(steps):
        ys = torch.randint(0, num_classes, (cfg["bs"],), generator=g)
        xs = torch.stack([sample_shape(int(c), cfg["n"], g) for c in ys])
        batches.append((xs, ys))

    torch.manual_seed(seed)
    model = PointNet2SSG(cfg["w1"], cfg["w2"], cfg["s"], cfg["k"], num_classes)
    lr = 0.002 if fixed else cfg["lr"]  # BUG: SGD-recipe lr handed to Adam
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
