"""Healthy: RegNetY-style classifier (stem, stages of Y-blocks: 1x1 conv, grouped 3x3 conv
with group width g, squeeze-and-excitation, 1x1 conv, BatchNorm + ReLU, residual) trained
with the pycls recipe in miniature: the last BN of every residual branch zero-initialised
(Goyal et al. 2017, `zero_init_final_gamma`), 5-step linear warmup then cosine decay of a
nesterov SGD lr, weight decay 5e-5, and label-smoothed cross-entropy (eps 0.1).

What looks alarming but is fine:
  * at step 0 every residual branch outputs exactly 0 (gamma = 0): the blocks are
    identities, most conv weights get (near-)zero gradients for the first steps and the
    network looks "dead" -- the gammas pick up gradient immediately and the branches
    switch on;
  * the warmup makes the first steps' updates tiny (loss flat at ~log K for a while);
  * label smoothing puts a floor under the loss (~0.5-0.7 instead of ~0), so the curve
    flattens well above zero;
  * the learning-rate change is applied by an optimizer step hook, so the scheduler is
    invisible from the training loop.
The loss falls steadily to the smoothing floor; nothing is wrong.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Radosavovic et al. 2020 RegNet / facebookresearch pycls (zero_init_final_gamma, "
          "warmup + cosine, label smoothing); Goyal et al. 2017 zero-gamma residual init.")


class SE(nn.Module):
    def __init__(self, c, r):
        super().__init__()
        self.f = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, r, 1), nn.ReLU(inplace=True),
                               nn.Conv2d(r, c, 1), nn.Sigmoid())

    def forward(self, x):
        return x * self.f(x)


class YBlock(nn.Module):
    def __init__(self, cin, cout, stride, gw):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))
        self.b = nn.Sequential(nn.Conv2d(cout, cout, 3, stride, 1, groups=cout // gw, bias=False),
                               nn.BatchNorm2d(cout), nn.ReLU(inplace=True))
        self.se = SE(cout, max(4, cin // 4))
        self.c = nn.Conv2d(cout, cout, 1, bias=False)
        self.c_bn = nn.BatchNorm2d(cout)
        nn.init.zeros_(self.c_bn.weight)                    # zero_init_final_gamma
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = self.c_bn(self.c(self.se(self.b(self.a(x)))))
        return F.relu(h + (x if self.proj is None else self.proj(x)))


class RegNetY(nn.Module):
    def __init__(self, widths, depths, gw, num_classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        blocks, c = [], 16
        for w, d in zip(widths, depths):
            for i in range(d):
                blocks.append(YBlock(c, w, 2 if i == 0 else 1, gw))
                c = w
        self.trunk = nn.Sequential(*blocks)
        self.head = nn.Linear(c, num_classes)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(self.trunk(self.stem(x)), 1).flatten(1))


def make_batches(g, steps, bs, K):
    protos = torch.randn(K, 3, 4, 4, generator=g)
    out = []
    for _ in range(steps):
        y = torch.randint(0, K, (bs,), generator=g)
        x = F.interpolate(protos[y], size=24, mode="bilinear", align_corners=False)
        out.append((x + 0.6 * torch.randn(bs, 3, 24, 24, generator=g), y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    widths, depths, gw = [([24, 48], [1, 2], 8), ([16, 32, 64], [1, 1, 1], 8), ([24, 56], [2, 1], 4)][seed % 3]
    K = [10, 8, 10][seed % 3]
    bs = [32, 24, 32][seed % 3]
    steps = [90, 100, 80][seed % 3]
    base_lr = [0.2, 0.1, 0.15][seed % 3]
    warmup = 5
    model = RegNetY(widths, depths, gw, K)
    opt = torch.optim.SGD(model.parameters(), lr=base_lr * 0.1, momentum=0.9, nesterov=True, weight_decay=5e-5)

    def lr_at(t):
        if t < warmup:
            return base_lr * (0.1 + 0.9 * t / warmup)
        return 0.5 * base_lr * (1 + math.cos(math.pi * (t - warmup) / (steps - warmup)))

    state = {"t": 0}

    def schedule_hook(optimizer, args, kwargs):  # pycls-style per-iteration lr update
        state["t"] += 1
        for pg in optimizer.param_groups:
            pg["lr"] = lr_at(state["t"])

    opt.register_step_post_hook(schedule_hook)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(label_smoothing=0.1),
                batches=make_batches(g, steps, bs, K), steps=steps)
