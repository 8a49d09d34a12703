"""Siamese triplet network (FaceNet-style) whose distance module takes sqrt of an exactly-zero squared distance.

Mechanism: a small shared conv encoder maps anchor / positive / negative glyph images to L2-normalised
embeddings; a `PairL2` module computes Euclidean distances as ``((a - b) ** 2).sum(1).sqrt()`` and the loss is
the margin triplet loss relu(d_ap - d_an + margin).  Training is calm for many steps.  The dataset (like many
scraped face / product datasets) contains exact duplicate images; at one step, seed dependent in the middle
of the run, the triplet sampler draws a duplicate of the anchor as its positive.  Then d_ap is exactly 0.
The forward value is fine (sqrt(0) = 0) but the backward of sqrt is grad / (2 * sqrt(x)) = 0/0 or 1/0: the
gradient of the distance module becomes NaN/inf, it flows through the (zero) difference a - b into the
shared encoder, Adam writes NaN into every weight and the loss is NaN from the next step on.
ORIGIN = "dist": the non-finite value is born in the backward of the distance module; the encoder only
receives it.  The data are legitimate (a zero distance between duplicates is correct), the op is unsafe.
Fix: the epsilon that F.pairwise_distance / nn.TripletMarginLoss use, i.e. sqrt(sum + eps) (eps = 1e-12).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "dist"
SOURCE = ("Known triplet-loss pitfall: the derivative of sqrt at 0 is infinite, so Euclidean distances between "
          "identical embeddings give NaN gradients (O. Moindrot 'Triplet Loss and Online Triplet Mining'; PyTorch "
          "forum threads 'NaN in triplet loss when anchor equals positive'; nn.PairwiseDistance adds eps for this).")


class PairL2(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, a, b):
        return ((a - b) ** 2).sum(1).add(self.eps).sqrt()


class Encoder(nn.Module):
    def __init__(self, ch, emb):
        super().__init__()
        self.conv1 = nn.Conv2d(1, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, 2 * ch, 3, padding=1, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.fc = nn.Linear(8 * ch, emb)

    def forward(self, x):
        h = F.relu(self.conv1(x))
        h = F.relu(self.conv2(h))
        h = self.pool(h).flatten(1)
        return F.normalize(self.fc(h), dim=1)


class SiameseTriplet(nn.Module):
    def __init__(self, ch, emb, eps):
        super().__init__()
        self.encoder = Encoder(ch, emb)
        self.dist = PairL2(eps)

    def forward(self, a, p, n):
        ea, ep, en = self.encoder(a), self.encoder(p), self.encoder(n)
        return self.dist(ea, ep), self.dist(ea, en)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    n_cls = 5 + seed % 4
    ch = [6, 8, 10][seed % 3]
    emb = [8, 12, 16][(seed + 1) % 3]
    bs = [24, 32, 40][seed % 3]
    steps = 120 + 20 * (seed % 4)
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    margin = 0.3
    side = 12
    dup_step = int(steps * (0.35 + 0.08 * (seed % 5)))

    templates = torch.randn(n_cls, 1, side, side, generator=g)
    templates = F.avg_pool2d(templates, 3, 1, 1) * 2.0   # smooth class glyphs

    def sample(cls):
        return templates[cls] + 1.0 * torch.randn(cls.shape[0], 1, side, side, generator=g)

    batches = []
    for t in range(steps):
        ca = torch.randint(0, n_cls, (bs,), generator=g)
        cn = (ca + torch.randint(1, n_cls, (bs,), generator=g)) % n_cls
        a, p, n = sample(ca), sample(ca), sample(cn)
        if t == dup_step:
            k = int(torch.randint(0, bs, (1,), generator=g))
            p[k] = a[k]          # an exact duplicate image drawn as the positive
        batches.append(((a, p, n), torch.zeros(bs)))

    model = SiameseTriplet(ch, emb, eps=1e-12 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, y):
        d_ap, d_an = out
        return F.relu(d_ap - d_an + margin).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
