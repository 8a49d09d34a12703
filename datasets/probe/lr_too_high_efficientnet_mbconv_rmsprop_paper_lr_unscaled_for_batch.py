"""EfficientNet-B0-style classifier (stem conv, MBConv blocks: 1x1 expand, depthwise 3x3,
squeeze-and-excitation, 1x1 linear projection, BatchNorm + SiLU, residual where shapes
allow; 1x1 head conv, dropout, FC), trained with the paper's optimiser: RMSprop,
decay 0.9, momentum 0.9, epsilon 1e-3 (TF-style eps, so not the eps trap).

The learning rate is copied verbatim from the paper, 0.256 -- but that value is for a
global batch of 4096 on TPU (0.016 per 256 images); the run uses batch 16-32 on one
device and never applied the linear scaling rule.

Mechanism: RMSprop with momentum 0.9 takes steps of ~lr/sqrt(1-alpha) per weight scaled
by g/sqrt(E[g^2]) ~ 1: with lr 0.256 every update is ~100x the per-step change the
optimiser is designed for and far larger than the weights. The update/weight ratio is
~0.1-1 from the first step; BN hides it for a few steps, then the logits swing to huge
values, the loss jumps by orders of magnitude and oscillates at a level above the
initial one (or overflows) -- no learning happens. No single module is at fault.

ORIGIN: None (the global learning rate).

Fix: lr = 0.256 * batch / 4096 (i.e. 0.001-0.002), the linear-scaled value; nothing else
changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Tan & Le 2019 EfficientNet (RMSProp decay 0.9, momentum 0.9, lr 0.256 for batch "
          "4096); Goyal et al. 2017 linear scaling rule; timm / forum threads on porting "
          "the EfficientNet lr to single-GPU batch sizes.")


class SE(nn.Module):
    def __init__(self, c, r):
        super().__init__()
        self.fc1 = nn.Conv2d(c, r, 1)
        self.fc2 = nn.Conv2d(r, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.fc2(F.silu(self.fc1(s))))


class MBConv(nn.Module):
    def __init__(self, cin, cout, expand, stride):
        super().__init__()
        mid = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU()]
        layers += [nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.SiLU(),
                   SE(mid, max(2, cin // 4)),
                   nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class EfficientNetLite(nn.Module):
    def __init__(self, cfg, num_classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU())
        blocks, c = [], 16
        for cout, expand, stride, n in cfg:
            for i in range(n):
                blocks.append(MBConv(c, cout, expand, stride if i == 0 else 1))
                c = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Sequential(nn.Conv2d(c, 4 * c, 1, bias=False), nn.BatchNorm2d(4 * c), nn.SiLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                                  nn.Linear(4 * c, num_classes))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def make_batches(g, steps, bs, K):
    protos = torch.randn(K, 3, 4, 4, generator=g)
    out = []
    for _ in range(steps):
        y = torch.randint(0, K, (bs,), generator=g)
        x = F.interpolate(protos[y], size=32, mode="bilinear", align_corners=False)
        out.append((x + 0.5 * torch.randn(bs, 3, 32, 32, generator=g), y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        [(16, 1, 1, 1), (24, 6, 2, 2), (40, 6, 2, 1)],
        [(16, 1, 1, 1), (24, 4, 2, 1), (32, 4, 2, 2)],
        [(16, 1, 1, 1), (24, 6, 2, 2), (32, 6, 1, 1), (48, 6, 2, 1)],
    ][seed % 3]
    bs = [32, 16, 24][seed % 3]
    K = [10, 8, 10][seed % 3]
    steps = [70, 50, 60][seed % 3]
    lr = 0.256 * bs / 4096 if fixed else 0.256
    model = EfficientNetLite(cfg, K)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.9, momentum=0.9, eps=1e-3, weight_decay=1e-5)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(label_smoothing=0.1),
                batches=make_batches(g, steps, bs, K), steps=steps)
