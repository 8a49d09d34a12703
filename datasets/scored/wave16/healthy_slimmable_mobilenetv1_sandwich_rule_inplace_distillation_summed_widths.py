"""Healthy: universally-slimmable MobileNetV1 trained with the sandwich rule + in-place distillation.

What looks alarming: every step trains four sub-networks that share one set of weights
(the full width 1.0, the smallest 0.25 and two widths drawn at random from
{0.375, ..., 0.875}), and the loss is the SUM of CE(full width) and three
KL(full || sub-width) terms (in-place distillation).  The distillation target moves with
the full network: the KL terms start near 0 and RISE for the first half of the run
(0.02 -> 0.5) while the CE falls, so the summed loss flattens and jumps from step to step
depending on which widths were drawn.  The 0.25-width network has a visibly higher loss
than the full one, channels beyond the sampled width get no gradient on most steps, and
each width has its own (switchable) BatchNorm, most of which are updated only on some
steps.

Why it is fine: this is the Universally Slimmable Networks recipe (Yu & Huang 2019).  The
summed loss trends down steadily, every width improves, no gradient or activation blows
up.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Slimmable Neural Networks (Yu et al., ICLR 2019) switchable BN; Universally Slimmable Networks and "
          "Improved Training Techniques (Yu & Huang, ICCV 2019): sandwich rule + in-place distillation")

WIDTHS = [0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]


def ch(c, wm):
    return max(4, int(round(c * wm)))


class SlimConv(nn.Conv2d):
    def __init__(self, cin, cout, k, stride, depthwise=False):
        super().__init__(cin, cout, k, stride, k // 2, groups=cin if depthwise else 1, bias=False)
        self.depthwise = depthwise
        self.cout_max = cout

    def forward(self, x, wm):
        cin = x.shape[1]
        if self.depthwise:
            return F.conv2d(x, self.weight[:cin], None, self.stride, self.padding, groups=cin)
        cout = ch(self.cout_max, wm)
        return F.conv2d(x, self.weight[:cout, :cin], None, self.stride, self.padding)


class SwitchableBN(nn.Module):
    def __init__(self, c_max):
        super().__init__()
        self.bns = nn.ModuleList([nn.BatchNorm2d(ch(c_max, wm)) for wm in WIDTHS])

    def forward(self, x, wm):
        return self.bns[WIDTHS.index(wm)](x)


class SlimDWSep(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.dw = SlimConv(cin, cin, 3, stride, depthwise=True)
        self.bn1 = SwitchableBN(cin)
        self.pw = SlimConv(cin, cout, 1, 1)
        self.bn2 = SwitchableBN(cout)

    def forward(self, x, wm):
        x = F.relu(self.bn1(self.dw(x, wm), wm))
        return F.relu(self.bn2(self.pw(x, wm), wm))


class SlimMobileNetV1(nn.Module):
    def __init__(self, w, n_cls, seed):
        super().__init__()
        self.stem = SlimConv(3, w, 3, 1)
        self.stem_bn = SwitchableBN(w)
        self.blocks = nn.ModuleList([SlimDWSep(w, 2 * w, 1), SlimDWSep(2 * w, 4 * w, 2), SlimDWSep(4 * w, 4 * w, 1),
                                     SlimDWSep(4 * w, 8 * w, 2)])
        self.c_last = 8 * w
        self.fc = nn.Linear(8 * w, n_cls)
        self.sampler = torch.Generator().manual_seed(10_000 + seed)

    def forward_width(self, x, wm):
        h = F.relu(self.stem_bn(self.stem(x, wm), wm))
        for blk in self.blocks:
            h = blk(h, wm)
        h = F.adaptive_avg_pool2d(h, 1).flatten(1)
        c = h.shape[1]
        return F.linear(h, self.fc.weight[:, :c], self.fc.bias)

    def forward(self, x):
        mids = WIDTHS[1:-1]
        picks = torch.randperm(len(mids), generator=self.sampler)[:2].tolist()
        widths = [1.0, 0.25] + [mids[i] for i in picks]
        return [self.forward_width(x, wm) for wm in widths]


class SandwichLoss(nn.Module):
    def forward(self, outs, y):
        full = outs[0]
        loss = F.cross_entropy(full, y)
        soft = F.softmax(full.detach(), dim=1)
        for o in outs[1:]:
            loss = loss + F.kl_div(F.log_softmax(o, dim=1), soft, reduction="batchmean")
        return loss


def make_images(y, g, n_cls):
    b = y.shape[0]
    coords = torch.linspace(-1, 1, 16)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = (y % 4).float() * math.pi / 4 + 0.1 * torch.randn(b, generator=g)
    freq = 2.5 + 3.0 * (y // 4).float()
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    img = base[:, None] * (1.0 + 0.3 * torch.randn(b, 3, 1, 1, generator=g)) + 0.6 * torch.randn(b, 3, 16, 16, generator=g)
    return (img - img.mean()) / img.std()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=16, bs=32, lr=0.05, steps=80),
           dict(w=12, bs=48, lr=0.08, steps=70),
           dict(w=16, bs=24, lr=0.03, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2323 + seed)
    n_cls = 8
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((make_images(y, g, n_cls), y))
    model = SlimMobileNetV1(cfg["w"], n_cls, seed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=4e-5, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=SandwichLoss(), batches=batches, steps=cfg["steps"])
