"""SqueezeNet v1.1 classifier (final 1x1 conv -> ReLU -> global avg pool) killed by a too-large Adam lr.

Mechanism: SqueezeNet has no fully connected head: the class scores are produced by a 1x1
conv followed by a ReLU and global average pooling (torchvision's ``classifier =
Dropout, final_conv, ReLU, AdaptiveAvgPool``), so every logit is the mean of a ReLU'd
map and is >= 0.  The model is trained with Adam at lr 1e-2 .. 5e-2 (values that "work"
for a small BN MLP).  Adam moves every weight of final_conv by ~lr per step in the sign of its
gradient; because its inputs are non-negative post-ReLU fire features from ~32-128
channels, one step shifts a class's pre-ReLU score map by ~lr * sum(features), several
units.  Within the first few dozen steps the score maps of all classes are pushed below zero
everywhere, the ReLU outputs all-zero logits for every image, the softmax is uniform,
and since the ReLU passes no gradient when its input is negative nothing can bring them
back: the loss sits at exactly log(C) for the rest of the run (the well-known "SqueezeNet
loss stuck at ln(num_classes)").

ORIGIN: ``classifier.1``, the ReLU after ``final_conv``: it is the unit population that
dies, and with it every gradient path into the network.

Fix: a smaller Adam lr (1e-3), nothing else changed.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "classifier.1"
SOURCE = ("torchvision SqueezeNet 1.1 head (final_conv -> ReLU -> AdaptiveAvgPool2d); PyTorch forum threads "
          "'SqueezeNet loss stuck at 2.30 / ln(num_classes) when fine-tuning with Adam' (dead final ReLU)")


class Fire(nn.Module):
    def __init__(self, cin, s, e):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, s, 1)
        self.squeeze_activation = nn.ReLU()
        self.expand1x1 = nn.Conv2d(s, e, 1)
        self.expand1x1_activation = nn.ReLU()
        self.expand3x3 = nn.Conv2d(s, e, 3, padding=1)
        self.expand3x3_activation = nn.ReLU()

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat([self.expand1x1_activation(self.expand1x1(x)),
                          self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet11(nn.Module):
    def __init__(self, w, n_cls):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 2 * w, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2, 2),
            Fire(2 * w, w // 2, w), Fire(2 * w, w // 2, w), nn.MaxPool2d(2, 2),
            Fire(2 * w, w, 2 * w), Fire(4 * w, w, 2 * w))
        final_conv = nn.Conv2d(4 * w, n_cls, 1)
        self.classifier = nn.Sequential(final_conv, nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.classifier(self.features(x)).flatten(1)


def make_images(y, g, n_cls):
    b = y.shape[0]
    coords = torch.linspace(-1, 1, 16)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = (y % 3).float() * math.pi / 3 + 0.1 * torch.randn(b, generator=g)
    freq = 2.5 + 3.0 * (y // 3).float()
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    tint = 1.0 + 0.3 * torch.randn(b, 3, 1, 1, generator=g)
    img = base[:, None] * tint + 0.5 * torch.randn(b, 3, 16, 16, generator=g)
    return (img - img.mean()) / img.std()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=16, bs=32, lr=1e-2, steps=140),
           dict(w=12, bs=48, lr=3e-2, steps=90),
           dict(w=24, bs=24, lr=5e-2, steps=110)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(717 + seed)
    n_cls = 6
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((make_images(y, g, n_cls), y))
    model = SqueezeNet11(cfg["w"], n_cls)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
