"""DELF-style landmark retrieval model (Noh et al., ICCV 2017): a small ResNet trunk gives a
dense local-feature map f_n; an attention head (1x1 conv -> ReLU -> 1x1 conv -> score
activation) gives one score alpha_n per location; the image feature is the attention-weighted
SUM  y = sum_n alpha_n f_n, trained with a landmark-classification cross-entropy (the DELF
attention-training stage). DELF uses softplus for the score; this port "simplified" it to
``nn.ReLU()``.

Mechanism: at initialisation the summed feature is large (it adds up H*W positive
features), the logits are large and mostly wrong, and the quickest way for cross-entropy to
go down is to shrink every alpha_n. Every location's score gradient therefore points the same
way, and with Adam's ~lr-sized steps the bias of the score conv goes negative and the
pre-activation drops below 0 at every location of every image within a few steps. A ReLU
score is then exactly 0 everywhere: y = 0, the logits are the classifier bias, and no gradient
reaches the attention head or the trunk (alpha = 0 also zeroes the trunk's gradient). The loss
sits at log(n_classes) for the rest of the run. Softplus can get small but never stops passing
gradient, so the same run recovers and learns to attend to the landmark.

ORIGIN: ``attention.score_act`` -- the score ReLU is the unit that dies; everything behind
it is cut off.

Fix: softplus score activation (as in DELF); everything else identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "attention.score_act"
SOURCE = ('DELF (Noh et al., ICCV 2017) attention-weighted sum pooling uses softplus '
          'scores; known dead-ReLU pattern when a ReLU score gates a summed feature and all '
          'scores are pushed below zero')


class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.short = (nn.Sequential() if stride == 1 and c_in == c_out else
                      nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out)))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.short(x))


class AttentionHead(nn.Module):
    def __init__(self, c, fixed):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c // 2, 1)
        self.act1 = nn.ReLU()
        self.conv2 = nn.Conv2d(c // 2, 1, 1)
        self.score_act = nn.Softplus() if fixed else nn.ReLU()

    def forward(self, f):
        return self.score_act(self.conv2(self.act1(self.conv1(f))))


class DELF(nn.Module):
    def __init__(self, width, n_blocks, n_classes, fixed):
        super().__init__()
        layers = [nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()]
        c = width
        for i in range(n_blocks):
            stride = 2 if i in (0, 2) else 1
            c_out = c * 2 if stride == 2 else c
            layers.append(BasicBlock(c, c_out, stride))
            c = c_out
        self.trunk = nn.Sequential(*layers)
        self.attention = AttentionHead(c, fixed)
        self.classifier = nn.Linear(c, n_classes)

    def forward(self, x):
        f = self.trunk(x)
        a = self.attention(f)
        y = (a * f).sum(dim=(2, 3))            # attention-weighted sum pooling
        return self.classifier(y)


def make_batch(g, bs, size, templates):
    n_classes = templates.shape[0]
    x = 0.5 * torch.rand(bs, 3, size, size, generator=g)
    y = torch.randint(0, n_classes, (bs,), generator=g)
    for i in range(bs):
        k = templates.shape[-1]
        r = int(torch.randint(0, size - k, (1,), generator=g))
        c = int(torch.randint(0, size - k, (1,), generator=g))
        x[i, :, r:r + k, c:c + k] = templates[y[i]]
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=16, n_blocks=3, n_classes=8, lr=1e-3, bs=16, size=32, steps=100),
        dict(width=12, n_blocks=4, n_classes=10, lr=1e-3, bs=12, size=32, steps=120),
        dict(width=20, n_blocks=3, n_classes=6, lr=2e-3, bs=20, size=32, steps=80),
    ][seed % 3]
    torch.manual_seed(seed)
    model = DELF(cfg["width"], cfg["n_blocks"], cfg["n_classes"], fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(77 + seed)
    templates = (torch.rand(cfg["n_classes"], 3, 8, 8, generator=g) > 0.5).float()
    batches = [make_batch(g, cfg["bs"], cfg["size"], templates) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
