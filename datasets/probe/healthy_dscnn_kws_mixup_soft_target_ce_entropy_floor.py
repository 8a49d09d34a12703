"""Healthy: DS-CNN keyword spotter (Zhang et al., 'Hello Edge', 2017) on MFCC maps --
a strided Conv2d stem, depthwise-separable conv blocks with BatchNorm+ReLU, global
average pooling and a linear classifier over 12 classes (10 keywords + silence +
unknown) -- trained with mixup (Zhang et al. 2018): every batch is blended with a
shuffled copy of itself with lambda ~ Beta(0.4, 0.4), and the cross entropy is taken
against the blended soft targets.

Why it looks alarming: the loss can never approach 0.  A mixed example with weight
lambda has target entropy H(lambda) (up to ln 2 ~ 0.69 nats at lambda = 0.5), so the
loss floor of a *perfect* model is E[H(lambda)] ~ 0.4 nats, and since lambda is redrawn
per batch, the per-step loss jumps up and down by several tenths forever.  The curve
looks like a noisy plateau far above zero -- but the model is learning normally; the
excess over the entropy floor keeps shrinking.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("DS-CNN from Zhang, Suda, Lai, Chandra 'Hello Edge: Keyword Spotting on "
          "Microcontrollers' (2017); mixup (Zhang, Cisse, Dauphin, Lopez-Paz, ICLR 2018) "
          "as used in Speech Commands recipes; 'loss does not go below 0.5 with mixup' questions")


class DSBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.pw = nn.Conv2d(c, c, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        x = F.relu(self.bn1(self.dw(x)))
        return F.relu(self.bn2(self.pw(x)))


class DSCNN(nn.Module):
    def __init__(self, c, n_blocks, n_classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, c, (10, 4), stride=(2, 2), padding=(5, 1), bias=False),
                                  nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.Sequential(*[DSBlock(c) for _ in range(n_blocks)])
        self.fc = nn.Linear(c, n_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(x.mean(dim=(2, 3)))


def _kws_batch(g, bs, frames, n_mfcc, protos, n_classes, beta):
    y = torch.randint(0, n_classes, (bs,), generator=g)
    shift = torch.randint(-4, 5, (bs,), generator=g)
    x = torch.stack([torch.roll(protos[int(c)], int(s), dims=0) for c, s in zip(y, shift)])
    x = x + 0.7 * torch.randn(bs, frames, n_mfcc, generator=g)
    x = (x - x.mean()) / x.std()
    onehot = F.one_hot(y, n_classes).float()
    # mixup with a shuffled copy of the batch, one lambda per batch
    lam = float(beta.sample())
    perm = torch.randperm(bs, generator=g)
    xm = lam * x + (1 - lam) * x[perm]
    ym = lam * onehot + (1 - lam) * onehot[perm]
    return xm[:, None], ym


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(c=32, n_blocks=3, frames=49, n_mfcc=10, bs=32, lr=3e-3, steps=100),
           dict(c=24, n_blocks=4, frames=40, n_mfcc=10, bs=48, lr=2e-3, steps=90),
           dict(c=32, n_blocks=2, frames=49, n_mfcc=13, bs=24, lr=4e-3, steps=110)][seed % 3]
    n_classes = 12
    torch.manual_seed(seed)  # also drives the Beta(0.4, 0.4) mixup draws below
    g = torch.Generator().manual_seed(1212 + seed)
    protos = torch.randn(n_classes, cfg["frames"] // 7, cfg["n_mfcc"], generator=g)
    protos = F.interpolate(protos[:, None], size=(cfg["frames"], cfg["n_mfcc"]), mode="bilinear",
                           align_corners=False)[:, 0] * 2.0
    model = DSCNN(cfg["c"], cfg["n_blocks"], n_classes)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))
    batches = [_kws_batch(g, cfg["bs"], cfg["frames"], cfg["n_mfcc"], protos, n_classes, beta)
               for _ in range(cfg["steps"])]

    def soft_ce(logits, soft_targets):
        return F.cross_entropy(logits, soft_targets)  # probabilities as targets

    return dict(model=model, optimizer=opt, loss_fn=soft_ce, batches=batches, steps=cfg["steps"])
