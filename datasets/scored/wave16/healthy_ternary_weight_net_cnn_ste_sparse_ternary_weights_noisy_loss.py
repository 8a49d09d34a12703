"""Healthy: Ternary Weight Network CNN trained with a straight-through estimator (noisy but converging).

What looks alarming: the conv layers in the body use ternary weights {-a, 0, +a}
(TWN: threshold Delta = 0.7 * mean|W|, a = mean of the surviving |W|), so ~35-45% of every
layer's effective weights are exactly zero and the effective weights change in discrete
jumps whenever a latent weight crosses +-Delta.  The forward function is piecewise constant
in the latent weights; gradients reach them only through the straight-through estimator,
so gradient and loss curves are jumpy (sign flips of many weights in one step, occasional
loss spikes after a large re-ternarisation), the latent weights keep drifting while the
effective weights stay fixed for several steps, and the update/weight ratio of the latent
weights is meaningless as a health signal.

Why it is fine: STE training of TWNs is the standard recipe; the BN after every ternary
conv absorbs the scale changes, the full-precision stem and classifier are kept (usual
practice), and the loss trends steadily down with the spikes recovering within a few steps.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Ternary Weight Networks (Li, Zhang & Liu 2016): Delta = 0.7 E|W|, alpha = mean |W| over |W| > Delta, "
          "trained with a straight-through estimator; first/last layers full precision")


class TernarizeSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w):
        delta = 0.7 * w.abs().mean()
        keep = (w.abs() > delta).float()
        alpha = (w.abs() * keep).sum() / keep.sum().clamp_min(1.0)
        return alpha * torch.sign(w) * keep

    @staticmethod
    def backward(ctx, g):
        return g


class TernaryConv2d(nn.Conv2d):
    def forward(self, x):
        return F.conv2d(x, TernarizeSTE.apply(self.weight), self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


def tblock(cin, cout, stride):
    return nn.Sequential(TernaryConv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class TWNConvNet(nn.Module):
    def __init__(self, w, n_cls):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU())
        self.body = nn.Sequential(tblock(w, w, 1), tblock(w, 2 * w, 2), tblock(2 * w, 2 * w, 1), tblock(2 * w, 4 * w, 2),
                                  tblock(4 * w, 4 * w, 1))
        self.fc = nn.Linear(4 * w, n_cls)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(self.stem(x)), 1).flatten(1))


def make_images(y, g, n_cls):
    b = y.shape[0]
    coords = torch.linspace(-1, 1, 16)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = (y % 5).float() * math.pi / 5 + 0.08 * torch.randn(b, generator=g)
    freq = 2.5 + 3.0 * (y // 5).float()
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    img = base[:, None] * (1.0 + 0.3 * torch.randn(b, 3, 1, 1, generator=g)) + 0.6 * torch.randn(b, 3, 16, 16, generator=g)
    return (img - img.mean()) / img.std()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=16, bs=32, lr=0.05, steps=100, opt="sgd"),
           dict(w=12, bs=48, lr=2e-3, steps=90, opt="adam"),
           dict(w=20, bs=24, lr=0.03, steps=110, opt="sgd")][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1212 + seed)
    n_cls = 10
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((make_images(y, g, n_cls), y))
    model = TWNConvNet(cfg["w"], n_cls)
    if cfg["opt"] == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
