"""Healthy: GhostNet whose SE hard-sigmoid gates are initialised (and stay) fully open.

What looks alarming: the squeeze-and-excitation modules of this GhostNet were inserted
with the "start as identity" trick: the excitation bias is initialised to +4 so the
hard-sigmoid gate ReLU6(x + 3) / 6 starts at exactly 1.  The gate inputs stay above +3, i.e.
in the flat, saturated region: every SE gate outputs exactly 1.0 and the gate's reduce /
expand convolutions receive exactly zero gradient for the whole run (grad norms exactly 0;
their parameters only move by the tiny weight decay).  On top of that, many ghost-module ReLUs are inactive and the
cheap depthwise branches have small activations.  A saturation detector sees a whole family
of saturated units.

Why it is fine: a gate pinned at 1 is an identity; the network simply trains as a GhostNet
without SE.  Everything outside the SE branch gets normal gradients, the loss falls
steadily, nothing blows up.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("GhostNet (Han et al., CVPR 2020; huawei-noah ghostnet.py SqueezeExcite with hard_sigmoid gate); "
          "'initialise new SE gates to identity' practice when adding SE blocks")


class HardSigmoid(nn.Module):
    def forward(self, x):
        return F.relu6(x + 3.0) / 6.0


class SqueezeExcite(nn.Module):
    def __init__(self, ch, gate_bias):
        super().__init__()
        red = max(4, ch // 4)
        self.conv_reduce = nn.Conv2d(ch, red, 1)
        self.conv_expand = nn.Conv2d(red, ch, 1)
        self.gate = HardSigmoid()
        with torch.no_grad():
            self.conv_expand.weight.mul_(0.1)
            self.conv_expand.bias.fill_(gate_bias)        # gate starts at exactly 1 ("identity" SE)

    def forward(self, x):
        s = F.relu(self.conv_reduce(F.adaptive_avg_pool2d(x, 1)))
        return x * self.gate(self.conv_expand(s))


class GhostModule(nn.Module):
    def __init__(self, cin, cout, relu):
        super().__init__()
        init = math.ceil(cout / 2)
        self.cout = cout
        self.primary = nn.Sequential(nn.Conv2d(cin, init, 1, bias=False), nn.BatchNorm2d(init),
                                     nn.ReLU() if relu else nn.Identity())
        self.cheap = nn.Sequential(nn.Conv2d(init, init, 3, 1, 1, groups=init, bias=False), nn.BatchNorm2d(init),
                                   nn.ReLU() if relu else nn.Identity())

    def forward(self, x):
        a = self.primary(x)
        return torch.cat([a, self.cheap(a)], 1)[:, :self.cout]


class GhostBottleneck(nn.Module):
    def __init__(self, cin, mid, cout, stride, se):
        super().__init__()
        self.ghost1 = GhostModule(cin, mid, True)
        self.dw = (nn.Sequential(nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid))
                   if stride > 1 else nn.Identity())
        self.se = SqueezeExcite(mid, 4.0) if se else nn.Identity()
        self.ghost2 = GhostModule(mid, cout, False)
        if stride == 1 and cin == cout:
            self.shortcut = nn.Identity()
        else:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                                          nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return self.ghost2(self.se(self.dw(self.ghost1(x)))) + self.shortcut(x)


class GhostNetLite(nn.Module):
    def __init__(self, w, n_cls):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU())
        self.blocks = nn.Sequential(
            GhostBottleneck(w, 2 * w, w, 1, False),
            GhostBottleneck(w, 3 * w, 2 * w, 2, True),
            GhostBottleneck(2 * w, 4 * w, 2 * w, 1, True),
            GhostBottleneck(2 * w, 6 * w, 4 * w, 2, True))
        self.head = nn.Sequential(nn.Conv2d(4 * w, 8 * w, 1, bias=False), nn.BatchNorm2d(8 * w), nn.ReLU())
        self.fc = nn.Linear(8 * w, n_cls)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.head(self.blocks(self.stem(x))), 1).flatten(1))


def make_images(y, g, n_cls):
    b = y.shape[0]
    coords = torch.linspace(-1, 1, 16)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = (y % 3).float() * math.pi / 3 + 0.1 * torch.randn(b, generator=g)
    freq = 2.5 + 3.0 * (y // 3).float()
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    img = base[:, None] * (1.0 + 0.3 * torch.randn(b, 3, 1, 1, generator=g)) + 0.6 * torch.randn(b, 3, 16, 16, generator=g)
    return (img - img.mean()) / img.std()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=16, bs=32, lr=0.04, steps=80),
           dict(w=12, bs=48, lr=0.06, steps=70),
           dict(w=20, bs=24, lr=0.02, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3434 + seed)
    n_cls = 9
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((make_images(y, g, n_cls), y))
    model = GhostNetLite(cfg["w"], n_cls)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=4e-5, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(label_smoothing=0.1), batches=batches,
                steps=cfg["steps"])
