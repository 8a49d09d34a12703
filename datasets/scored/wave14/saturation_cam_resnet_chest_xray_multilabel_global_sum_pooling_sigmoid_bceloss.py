"""Weakly-supervised localisation on chest X-rays (ChestX-ray14 style multi-label findings):
a small ResNet (BatchNorm) trunk, a 1x1 conv producing one class activation map (CAM) per
finding, CAM pooling to an image-level score, ``nn.Sigmoid()`` inside the model and
``nn.BCELoss()`` on the probabilities (the CheXNet reimplementation pattern), trained with
SGD + momentum.

Mechanism: the CAM paper writes the pooled class score as S_c = sum_{x,y} M_c(x, y) (the
1/Z of global AVERAGE pooling is left implicit), and this implementation pools with
``cam.sum(dim=(2, 3))``. Over an 8x8 .. 12x12 map the image-level logits come out at
+-15..80 at initialisation instead of O(1) (and are pushed further out by the first
updates), so the in-model sigmoid returns probabilities of (numerically) exactly 1.0 or
~1e-20 and its derivative p(1-p) is ~0: 40-65% of the outputs at step 0 and all of them
after a few steps. BCELoss then charges up to its
clamp of 100 nats for every wrongly-saturated finding, and almost no gradient flows back
through the saturated sigmoid to the CAM layer or the trunk: the loss is frozen at a high
plateau from the first step.

ORIGIN: ``sigmoid`` -- the output sigmoid is the saturated unit that blocks the gradient.

Fix: global average pooling (``cam.mean(dim=(2, 3))``), i.e. O(1) logits; model, loss,
optimiser and data otherwise identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "sigmoid"
SOURCE = ('CAM (Zhou et al., CVPR 2016) writes the class score as S_c = sum_{x,y} M_c(x,y); '
          'CheXNet reimplementations put nn.Sigmoid in the model and use nn.BCELoss; known '
          'saturation pattern when the CAM is summed instead of averaged')


class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.short = (nn.Identity() if stride == 1 and c_in == c_out else
                      nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out)))

    def forward(self, x):
        return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))) + self.short(x))


class CAMNet(nn.Module):
    def __init__(self, width, blocks, n_findings, sum_pool):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, 3, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        layers, c = [], width
        for i, n in enumerate(blocks):
            for j in range(n):
                c_out = width * 2 ** i
                layers.append(BasicBlock(c, c_out, 2 if (i > 0 and j == 0) else 1))
                c = c_out
        self.trunk = nn.Sequential(*layers)
        self.cam = nn.Conv2d(c, n_findings, 1)
        self.sigmoid = nn.Sigmoid()
        self.sum_pool = sum_pool

    def forward(self, x):
        m = self.cam(self.trunk(self.stem(x)))             # class activation maps
        s = m.sum(dim=(2, 3)) if self.sum_pool else m.mean(dim=(2, 3))
        return self.sigmoid(s)


def make_batch(g, bs, size, n_findings):
    """Synthetic CXR with lungs/heart; findings: nodule (small bright disc), effusion (bright
    lower lung band), cardiomegaly (wide heart), pneumothorax (dark rim), consolidation
    (bright patch); multi-label."""
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    imgs, labels = [], []
    for _ in range(bs):
        lab = (torch.rand(n_findings, generator=g) < 0.3).float()
        lungs = ((((xx.abs() - 0.4) / 0.3) ** 2 + ((yy + 0.05) / 0.7) ** 2) < 1).float()
        hw = 0.35 if lab[2] > 0 else 0.2
        heart = ((((xx - 0.05) / hw) ** 2 + ((yy - 0.35) / 0.35) ** 2) < 1).float()
        img = 0.7 - 0.45 * lungs + 0.4 * heart
        if lab[0] > 0:
            cy, cx = (torch.rand(2, generator=g) - 0.5) * 0.8
            img = img + 0.5 * (((yy - cy) ** 2 + (xx - cx - 0.4 * torch.sign(cx)) ** 2) < 0.006).float()
        if lab[1] > 0:
            img = img + 0.35 * lungs * (yy > 0.4).float()
        if n_findings > 3 and lab[3] > 0:
            img = img - 0.25 * ((((xx.abs() - 0.4) / 0.33) ** 2 + ((yy + 0.05) / 0.75) ** 2 - 1).abs() < 0.15).float()
        if n_findings > 4 and lab[4] > 0:
            cy = float(torch.rand(1, generator=g)) * 0.8 - 0.5
            img = img + 0.3 * lungs * (((yy - cy) ** 2 + (xx.abs() - 0.4) ** 2) < 0.04).float()
        imgs.append(img + 0.05 * torch.randn(size, size, generator=g))
        labels.append(lab)
    x = torch.stack(imgs)[:, None]
    return (x - 0.5) / 0.25, torch.stack(labels)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=8, blocks=(1, 1, 1), lr=0.01, bs=16, size=64, K=5, steps=80),
        dict(width=12, blocks=(2, 1), lr=0.02, bs=12, size=48, K=4, steps=90),
        dict(width=8, blocks=(1, 2, 1), lr=0.01, bs=16, size=80, K=5, steps=70),
    ][seed % 3]
    torch.manual_seed(seed)
    model = CAMNet(cfg["width"], cfg["blocks"], cfg["K"], sum_pool=not fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
    g = torch.Generator().manual_seed(140 + seed)
    batches = [make_batch(g, cfg["bs"], cfg["size"], cfg["K"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=nn.BCELoss(), batches=batches, steps=cfg["steps"])
