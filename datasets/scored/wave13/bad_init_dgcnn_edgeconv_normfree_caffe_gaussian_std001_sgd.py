"""DGCNN (dynamic-graph EdgeConv) point-cloud classifier, BatchNorm-free, with
every 1x1 conv / linear initialised from a Caffe-style Gaussian filler
N(0, 0.01^2) through a hand-written ``init_weights`` helper.

Mechanism: each EdgeConv maps [x_i, x_j - x_i] through a 1x1 conv whose
weights have std 0.01, far below the He std sqrt(2/fan_in) (~0.1-0.25 here).
Without BatchNorm (removed because the author trained on tiny batches) the
activation scale shrinks by ~10x per EdgeConv block, so after three blocks the
global-max-pooled descriptor is ~1e-4 and the logits ~1e-6: the classifier sees
essentially constant features, the backward signal to the early blocks is
equally tiny, and SGD with momentum leaves the cross-entropy sitting at
log(num_classes) from step 0.

ORIGIN: ``edge_convs.0`` -- the first badly initialised layer; the geometric
shrinkage starts at the first EdgeConv and compounds through the stack.

Fix: Kaiming-normal initialisation (fan_in, leaky_relu slope 0.2) for the
EdgeConv kernels and linear layers.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "edge_convs.0"
SOURCE = ("DGCNN (Wang et al., 2019) ports without BatchNorm; Caffe 'gaussian std 0.01' weight "
          "filler carried into PyTorch point-cloud nets, reported as accuracy stuck at chance / "
          "loss flat at log(C)")


def knn(x, k):  # x: (B, C, N)
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = (x ** 2).sum(dim=1, keepdim=True)
    dist = -xx - inner - xx.transpose(2, 1)
    return dist.topk(k=k, dim=-1)[1]  # (B, N, k)


def edge_features(x, k):
    b, c, n = x.shape
    idx = knn(x, k)
    base = torch.arange(b).view(-1, 1, 1) * n
    idx = (idx + base).view(-1)
    xt = x.transpose(2, 1).contiguous()
    nb = xt.view(b * n, -1)[idx].view(b, n, k, c)
    xc = xt.view(b, n, 1, c).expand(-1, -1, k, -1)
    return torch.cat([nb - xc, xc], dim=3).permute(0, 3, 1, 2).contiguous()  # (B, 2C, N, k)


class DGCNN(nn.Module):
    def __init__(self, widths, emb, num_classes, k):
        super().__init__()
        self.k = k
        self.edge_convs = nn.ModuleList()
        prev = 3
        for w in widths:
            self.edge_convs.append(nn.Conv2d(2 * prev, w, kernel_size=1))
            prev = w
        self.act = nn.LeakyReLU(0.2)
        self.fuse = nn.Conv1d(sum(widths), emb, kernel_size=1)
        self.head = nn.Sequential(nn.Linear(emb, 64), nn.LeakyReLU(0.2), nn.Linear(64, num_classes))

    def forward(self, pts):  # pts: (B, 3, N)
        x, feats = pts, []
        for conv in self.edge_convs:
            x = self.act(conv(edge_features(x, self.k))).max(dim=-1)[0]
            feats.append(x)
        x = self.act(self.fuse(torch.cat(feats, dim=1)))
        x = x.max(dim=-1)[0]
        return self.head(x)


def sample_shape(cls, n, g):
    u = torch.rand(n, generator=g) * 2 * math.pi
    v = torch.rand(n, generator=g)
    if cls == 0:  # sphere
        p = torch.randn(n, 3, generator=g); p = p / p.norm(dim=1, keepdim=True)
    elif cls == 1:  # cube surface
        p = torch.rand(n, 3, generator=g) * 2 - 1
        ax = torch.randint(0, 3, (n,), generator=g)
        p[torch.arange(n), ax] = torch.sign(p[torch.arange(n), ax])
    elif cls == 2:  # cylinder
        p = torch.stack([torch.cos(u), torch.sin(u), v * 2 - 1], dim=1)
    elif cls == 3:  # cone
        p = torch.stack([(1 - v) * torch.cos(u), (1 - v) * torch.sin(u), v * 2 - 1], dim=1)
    else:  # torus
        w = torch.rand(n, generator=g) * 2 * math.pi
        p = torch.stack([(0.7 + 0.3 * torch.cos(w)) * torch.cos(u),
                         (0.7 + 0.3 * torch.cos(w)) * torch.sin(u), 0.3 * torch.sin(w)], dim=1)
    q, _ = torch.linalg.qr(torch.randn(3, 3, generator=g))
    p = p @ q * (0.8 + 0.4 * torch.rand(1, generator=g))
    return (p + 0.02 * torch.randn(n, 3, generator=g)).t()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(widths=[32, 32, 64], emb=64, k=8, n=48, bs=16, lr=0.05),
        dict(widths=[24, 48], emb=96, k=6, n=40, bs=24, lr=0.02),
        dict(widths=[32, 32, 32, 32], emb=64, k=8, n=32, bs=12, lr=0.03),
    ][seed % 3]
    g = torch.Generator().manual_seed(2000 + seed)
    num_classes, steps = 5, 100
    batches = []
    for _ in range(steps):
        ys = torch.randint(0, num_classes, (cfg["bs"],), generator=g)
        xs = torch.stack([sample_shape(int(c), cfg["n"], g) for c in ys])
        batches.append((xs, ys))

    torch.manual_seed(seed)
    model = DGCNN(cfg["widths"], cfg["emb"], num_classes, cfg["k"])

    def init_weights(m):
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, a=0.2, nonlinearity="leaky_relu")
            else:
                nn.init.normal_(m.weight, mean=0.0, std=0.01)  # BUG: Caffe gaussian filler
            nn.init.zeros_(m.bias)
    model.apply(init_weights)

    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
