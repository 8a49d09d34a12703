"""Small CIFAR-style ResNet (BasicBlocks with BatchNorm and stochastic depth /
DropPath on the residual branch) trained with SGD+momentum, a 5-step LinearLR
warmup then CosineAnnealingLR over the full run (SequentialLR stepped per iteration through an
optimizer step post-hook).

Mechanism: the lr follows the linear scaling rule lr = 0.1 * batch_size / 256
(Goyal et al. 2017), but the code computes `0.1 * batch_size` - the /256 was lost -
giving a peak lr of 3.2-8 instead of ~0.0125-0.03. The warmup hides it for a few
steps; once the lr passes ~0.5 the classifier and residual-branch updates overshoot
(BatchNorm cannot absorb the scale of the final linear layer), the logits jump around
and the loss stays at or above chance for the rest of the window (the cosine spans
the full, 4x longer run, so the lr is still near its peak).

ORIGIN: None - a global optimiser setting, not a module.

Fix: lr = 0.1 * batch_size / 256; warmup, schedule and everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Goyal et al. 2017 linear scaling rule (lr = 0.1*bs/256) with the /256 dropped; "
          "timm-style DropPath ResNet; SequentialLR(LinearLR, CosineAnnealingLR).")


class DropPath(nn.Module):
    def __init__(self, p, gen):
        super().__init__()
        self.p, self.gen = p, gen

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = (torch.rand(x.shape[0], 1, 1, 1, generator=self.gen) >= self.p).to(x.dtype)
        return x * keep / (1 - self.p)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride, p, gen):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.drop_path = DropPath(p, gen)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(self.short(x) + self.drop_path(out))


class ResNet(nn.Module):
    def __init__(self, widths, n_cls, p_max, gen):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        blocks, cin = [], widths[0]
        n = len(widths)
        for i, w in enumerate(widths):
            blocks.append(BasicBlock(cin, w, 1 if i == 0 else 2, p_max * (i + 1) / n, gen))
            cin = w
        self.layers = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, n_cls)

    def forward(self, x):
        return self.fc(self.layers(self.stem(x)).mean((2, 3)))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(widths=[8, 16], bs=32, steps=60),
           dict(widths=[8, 16, 16], bs=64, steps=50),
           dict(widths=[8, 16, 16], bs=80, steps=50)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(123 + seed)
    gen_dp = torch.Generator().manual_seed(7 + seed)
    n_cls = 5
    model = ResNet(cfg["widths"], n_cls, 0.1, gen_dp)
    base = torch.randn(n_cls, 3, 8, 8, generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        x = base[y] + 0.8 * torch.randn(cfg["bs"], 3, 8, 8, generator=g)
        batches.append((x, y))
    lr = 0.1 * cfg["bs"] / 256 if fixed else 0.1 * cfg["bs"]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
    warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=5)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4 * cfg["steps"])   # schedule spans the full run; this is its first quarter
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[5])
    opt.register_step_post_hook(lambda *_: sched.step())
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
