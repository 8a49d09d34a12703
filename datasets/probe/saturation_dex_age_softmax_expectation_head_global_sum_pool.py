"""DEX-style apparent-age regressor (Rothe et al. 2015/2018): a small BN ResNet trunk,
global pooling, a linear layer over A age bins, softmax, and the *expected value*
sum_i p_i * age_i as the prediction, trained with L1 (MAE) on the age in years.

The bug: the global pooling is written as `feat = x.sum(dim=(2, 3))` (to "avoid the
AdaptiveAvgPool2d + flatten boilerplate") instead of the mean over the 8x8-12x12 final
grid, so the pooled descriptor -- a sum of 64-144 post-ReLU activations -- is ~100x
larger than the head was sized for.

Mechanism: the bin logits have a spread of tens to hundreds, the softmax over age bins is
one-hot from the first step, and the expectation collapses to the arg-max bin. The
gradient of the expected age with respect to the logits, p_i (age_i - E[age]), is ~0
for every bin (exactly 0 in float32 for most of them), so neither the head nor the trunk
receive a usable gradient; the argmax bin wanders with the features but the MAE does not
improve.

ORIGIN: age_softmax, the softmax over the age bins: the unit that saturates and blocks the
gradient.

Fix: global average pooling (mean over H, W), as in the reference model; nothing else
changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "age_softmax"
SOURCE = ("Rothe, Timofte & Van Gool, DEX: Deep EXpectation of apparent age (softmax "
          "expected value over 101 bins); forum reports of DEX / soft-argmax heads "
          "predicting integer ages with MAE stuck when the pooled features are too large.")


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + self.short(x))


class DEX(nn.Module):
    def __init__(self, w, n_bins, max_age, sum_pool):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
            Block(w, 2 * w, 2), Block(2 * w, 4 * w, 2))
        self.sum_pool = sum_pool
        self.fc = nn.Linear(4 * w, n_bins)
        self.age_softmax = nn.Softmax(dim=1)
        self.register_buffer("ages", torch.linspace(0, max_age, n_bins))

    def forward(self, x):
        f = self.trunk(x)
        f = f.sum(dim=(2, 3)) if self.sum_pool else f.mean(dim=(2, 3))
        p = self.age_softmax(self.fc(f))
        return (p * self.ages).sum(1)


def make_batches(g, steps, bs, S):
    # "faces": apparent age drives wrinkle-texture frequency/contrast and skin tone
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, S), torch.linspace(-1, 1, S), indexing="ij")
    face = ((yy / 0.9) ** 2 + (xx / 0.7) ** 2 < 1).float()
    out = []
    for _ in range(steps):
        age = 10 + 70 * torch.rand(bs, generator=g)
        a = (age / 80.0)[:, None, None]
        phase = 6.28 * torch.rand(bs, 1, 1, generator=g)
        wrinkles = a * torch.sin((4 + 10 * a) * yy[None] + phase) * 0.8
        tone = torch.stack([0.8 - 0.3 * a, 0.6 - 0.2 * a, 0.5 - 0.1 * a], 1)
        img = face[None, None] * (tone + wrinkles[:, None])
        img = img + 0.15 * torch.randn(bs, 3, S, S, generator=g)
        out.append(((img - 0.3) / 0.4, age))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = [8, 12, 8][seed % 3]
    S = [32, 32, 48][seed % 3]
    n_bins = [101, 81, 101][seed % 3]
    bs = [32, 24, 24][seed % 3]
    steps = [80, 90, 70][seed % 3]
    lr = [0.01, 0.01, 0.02][seed % 3]
    model = DEX(w, n_bins, 100.0, sum_pool=not fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(),
                batches=make_batches(g, steps, bs, S), steps=steps)
