"""Network-slimming CNN (BN-gamma L1 sparsity for structured channel pruning) with gamma=0.

Mechanism: Liu et al.'s network slimming trains a conv-BN-ReLU network with an L1 penalty
on the BatchNorm scaling factors and later prunes the channels whose gamma is small.  The
reference code initialises ``bn.weight.fill_(0.5)``; the user changed it to 0.0 so that
"every channel starts pruned and the task loss grows only the useful ones".  With gamma = 0
and beta = 0 every BN output is exactly 0, ReLU(0) = 0, and ReLU's derivative at 0 is 0 in
PyTorch: no gradient reaches gamma, beta or the conv weights (the L1 sub-gradient of |0| is
0 too).  The deeper blocks only see zeros, so the logits are the classifier bias and the
cross-entropy stays at log(C) for the whole run.

ORIGIN is ``bn1``: the first BatchNorm whose zero gamma silences ``relu1``; every later
block is dead only because its input is identically zero.

Fix: the reference init ``bn.weight.fill_(0.5)`` (any non-zero gamma).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "bn1"
SOURCE = ("Liu et al. 2017 'Learning Efficient Convolutional Networks through Network "
          "Slimming' (BN gamma L1 sparsity; reference code fills gamma with 0.5)")


class SlimCNN(nn.Module):
    def __init__(self, c1, c2, c3, n_classes):
        super().__init__()
        self.conv1, self.bn1, self.relu1 = nn.Conv2d(1, c1, 3, padding=1), nn.BatchNorm2d(c1), nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2, self.bn2, self.relu2 = nn.Conv2d(c1, c2, 3, padding=1), nn.BatchNorm2d(c2), nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.conv3, self.bn3, self.relu3 = nn.Conv2d(c2, c3, 3, padding=1), nn.BatchNorm2d(c3), nn.ReLU()
        self.fc = nn.Linear(c3, n_classes)

    def forward(self, x):
        x = self.pool1(self.relu1(self.bn1(self.conv1(x))))
        x = self.pool2(self.relu2(self.bn2(self.conv2(x))))
        x = self.relu3(self.bn3(self.conv3(x)))
        return self.fc(x.mean((2, 3)))


def make_images(n, img, n_classes, g):
    y = torch.randint(0, n_classes, (n,), generator=g)
    x = 0.15 * torch.rand(n, 1, img, img, generator=g)
    r = torch.randint(1, img - 1, (n,), generator=g)
    idx = torch.arange(img)
    for i in range(n):
        k = int(y[i])
        if k == 0:
            x[i, 0, r[i], :] = 1.0
        elif k == 1:
            x[i, 0, :, r[i]] = 1.0
        elif k == 2:
            x[i, 0, idx, idx] = 1.0
        elif k == 3:
            x[i, 0, idx, img - 1 - idx] = 1.0
        else:
            x[i, 0, r[i] - 1:r[i] + 2, r[i] - 1:r[i] + 2] = 1.0
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(img=16, c=(16, 32, 32), bs=32, lr=0.05, sparsity=1e-4, steps=70),
           dict(img=12, c=(12, 24, 48), bs=48, lr=0.1, sparsity=1e-4, steps=60),
           dict(img=16, c=(8, 16, 32), bs=24, lr=0.05, sparsity=5e-5, steps=80)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    model = SlimCNN(*cfg["c"], 5)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.weight.data.fill_(0.5 if fixed else 0.0)
            m.bias.data.zero_()
    batches = [make_images(cfg["bs"], cfg["img"], 5, g) for _ in range(cfg["steps"])]
    bn_gammas = [m.weight for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    s = cfg["sparsity"]

    def slimming_loss(logits, y):
        return F.cross_entropy(logits, y) + s * sum(gm.abs().sum() for gm in bn_gammas)

    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=slimming_loss, batches=batches,
                steps=cfg["steps"])
