"""WILDCAT-style weakly supervised multi-label classifier (Durand et al. 2017): a small BN
ResNet backbone, a multi-map transfer layer (1x1 conv to K classes x M modalities),
class-wise pooling over the M modalities, and WILDCAT spatial pooling -- the mean of the
k+ highest region scores plus alpha times the mean of the k- lowest -- followed by a
sigmoid and nn.BCELoss on the resulting probabilities (image-level tags, several per
image).

The bug: the spatial pooling sums the selected regions instead of averaging them,

    score = top.sum(-1) + alpha * bottom.sum(-1)        # should be .mean(-1)

with k+ = k- = 10-15% of the 20x20-24x24 positions, so the class scores are 40-60 times
too large.

Mechanism: the image-level logits are tens to hundreds in magnitude from the first step,
the sigmoid returns (numerically) exactly 0 or 1, and nn.BCELoss -- which takes
probabilities, not logits -- gets a zero local derivative through the saturated sigmoid
(its log is clamped at -100 for the wrong-side cases). Almost no gradient reaches the
transfer layer or the backbone, and the loss stays at its huge starting level.

ORIGIN: prob, the output sigmoid whose saturation blocks the gradient.

Fix: average over the selected regions (.mean(-1)), as in WILDCAT; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "prob"
SOURCE = ("Durand et al. 2017 'WILDCAT: Weakly Supervised Learning of Deep ConvNets for "
          "Image Classification, Pointwise Localization and Segmentation' (top-k+/k- "
          "region pooling, averaged); nn.BCELoss on sigmoid outputs vs BCEWithLogitsLoss.")


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + self.short(x))


class WildcatPool(nn.Module):
    def __init__(self, kmax, kmin, alpha, average):
        super().__init__()
        self.kmax, self.kmin, self.alpha, self.average = kmax, kmin, alpha, average

    def forward(self, maps):  # B, K, H, W
        s = maps.flatten(2).sort(dim=2, descending=True)[0]
        top, bottom = s[:, :, : self.kmax], s[:, :, -self.kmin:]
        if self.average:
            return top.mean(-1) + self.alpha * bottom.mean(-1)
        return top.sum(-1) + self.alpha * bottom.sum(-1)


class Wildcat(nn.Module):
    def __init__(self, w, K, M, n_pos, frac, average):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
            Block(w, 2 * w, 2), Block(2 * w, 4 * w, 1))
        self.K, self.M = K, M
        self.transfer = nn.Conv2d(4 * w, K * M, 1)
        k = max(1, int(frac * n_pos))
        self.pool = WildcatPool(k, k, 0.7, average)
        self.prob = nn.Sigmoid()

    def forward(self, x):
        maps = self.transfer(self.backbone(x))
        B, _, H, W = maps.shape
        maps = maps.view(B, self.K, self.M, H, W).mean(2)     # class-wise pooling
        return self.prob(self.pool(maps))


def make_batches(g, steps, bs, S, K):
    protos = torch.randn(K, 3, 8, 8, generator=g)
    out = []
    for _ in range(steps):
        y = (torch.rand(bs, K, generator=g) < 0.35).float()
        img = 0.3 * torch.randn(bs, 3, S, S, generator=g)
        for b in range(bs):
            for k in range(K):
                if y[b, k] > 0:
                    oy, ox = [int(v) for v in torch.randint(0, S - 8, (2,), generator=g)]
                    img[b, :, oy:oy + 8, ox:ox + 8] += protos[k]
        out.append((img, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = [8, 12, 8][seed % 3]
    S = [48, 40, 48][seed % 3]
    K = [5, 6, 4][seed % 3]
    M = [4, 2, 4][seed % 3]
    frac = [0.1, 0.15, 0.1][seed % 3]
    bs = [16, 12, 16][seed % 3]
    steps = [80, 90, 70][seed % 3]
    model = Wildcat(w, K, M, (S // 2) ** 2, frac, average=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=[0.05, 0.05, 0.08][seed % 3], momentum=0.9, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(),
                batches=make_batches(g, steps, bs, S, K), steps=steps)
