"""MobileNetV3-small whose hand-written hard-sigmoid SE gate shifts by -3 instead of +3.

Mechanism: MobileNetV3 gates its squeeze-and-excitation blocks with the hard sigmoid
h_sigmoid(x) = ReLU6(x + 3) / 6 (linear on [-3, 3], flat outside).  The re-implementation
writes ``F.relu6(x - 3.) / 6.``: the linear region moves to [3, 9] and, since the SE
excitation logits are O(0.1-1) at init, every gate sits in the flat region at exactly 0
with exactly zero derivative.  The first bneck block (stride 2, no residual) therefore
multiplies its whole depthwise output by 0, so every later layer receives a constant map,
and no gradient reaches the gate's excitation layers (flat region) or anything below the
gate.  Adam cannot help: the gradients are exactly zero, not small.  The classifier can only
fit the class prior and the loss stays at ~log(C).

ORIGIN: ``blocks.0.se.gate``, the hard-sigmoid of the first SE block: it is the saturated
unit whose zero output and zero derivative cut both the forward signal and the backward
gradient.

Fix: the correct hard sigmoid ReLU6(x + 3) / 6 (= nn.Hardsigmoid); nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "blocks.0.se.gate"
SOURCE = ("Searching for MobileNetV3 (Howard et al., ICCV 2019) h-sigmoid = ReLU6(x+3)/6; third-party "
          "MobileNetV3 re-implementations with hand-written h_sigmoid/h_swish modules")


class HSigmoid(nn.Module):
    def __init__(self, correct):
        super().__init__()
        self.correct = correct

    def forward(self, x):
        return F.relu6(x + 3.0) / 6.0 if self.correct else F.relu6(x - 3.0) / 6.0


class HSwish(nn.Module):
    def forward(self, x):
        return x * F.relu6(x + 3.0) / 6.0


class SqueezeExcite(nn.Module):
    def __init__(self, ch, correct):
        super().__init__()
        red = max(8, ch // 4)
        self.fc1 = nn.Conv2d(ch, red, 1)
        self.fc2 = nn.Conv2d(red, ch, 1)
        self.gate = HSigmoid(correct)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(F.relu(self.fc1(s))))


class Bneck(nn.Module):
    def __init__(self, cin, exp, cout, k, stride, se, act, correct):
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        layers = []
        if exp != cin:
            layers += [nn.Conv2d(cin, exp, 1, bias=False), nn.BatchNorm2d(exp), act()]
        layers += [nn.Conv2d(exp, exp, k, stride, k // 2, groups=exp, bias=False), nn.BatchNorm2d(exp), act()]
        self.pre = nn.Sequential(*layers)
        self.se = SqueezeExcite(exp, correct) if se else nn.Identity()
        self.project = nn.Sequential(nn.Conv2d(exp, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.project(self.se(self.pre(x)))
        return x + y if self.use_res else y


class MobileNetV3Small(nn.Module):
    def __init__(self, w, n_cls, correct):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), HSwish())
        self.blocks = nn.Sequential(
            Bneck(w, w, w, 3, 2, True, nn.ReLU, correct),
            Bneck(w, 4 * w, int(1.5 * w), 3, 1, False, nn.ReLU, correct),
            Bneck(int(1.5 * w), 4 * w, int(1.5 * w), 3, 1, False, nn.ReLU, correct),
            Bneck(int(1.5 * w), 4 * w, 2 * w, 5, 2, True, HSwish, correct),
            Bneck(2 * w, 6 * w, 2 * w, 5, 1, True, HSwish, correct))
        self.head = nn.Sequential(nn.Conv2d(2 * w, 6 * w, 1, bias=False), nn.BatchNorm2d(6 * w), HSwish())
        self.classifier = nn.Sequential(nn.Linear(6 * w, 8 * w), HSwish(), nn.Linear(8 * w, n_cls))

    def forward(self, x):
        h = self.head(self.blocks(self.stem(x)))
        return self.classifier(F.adaptive_avg_pool2d(h, 1).flatten(1))


def make_images(y, g, n_cls, size):
    b = y.shape[0]
    coords = torch.linspace(-1, 1, size)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = (y % 4).float() * math.pi / 4 + 0.1 * torch.randn(b, generator=g)
    freq = 2.5 + 3.0 * (y // 4).float()
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    img = base[:, None] * (1.0 + 0.3 * torch.randn(b, 3, 1, 1, generator=g)) + 0.5 * torch.randn(b, 3, size, size, generator=g)
    return (img - img.mean()) / img.std()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=16, size=16, bs=32, lr=2e-3, steps=70, opt="adam"),
           dict(w=12, size=20, bs=24, lr=0.05, steps=80, opt="sgd"),
           dict(w=16, size=16, bs=48, lr=1e-3, steps=60, opt="adam")][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7373 + seed)
    n_cls = 8
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((make_images(y, g, n_cls, cfg["size"]), y))
    model = MobileNetV3Small(cfg["w"], n_cls, correct=fixed)
    if cfg["opt"] == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    else:
        opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-5)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(label_smoothing=0.1), batches=batches,
                steps=cfg["steps"])
