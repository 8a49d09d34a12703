"""Keypoint-regression CNN trained with Nesterov SGD whose param groups carry a
Caffe-style `lr_mult`: the freshly initialised regression head gets 10x the base lr
(the old "fc8 gets lr_mult 10" fine-tuning recipe) while the schedule (linear warmup,
then cosine) lives inside the optimizer. Once warmup brings the head's lr past the
stability limit of its quadratic loss, the head weights oscillate with growing
amplitude and the loss runs to inf/NaN. fixed=True: the head's lr_mult is 1 like the
backbone (all else identical)."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = "head"
SOURCE = ("Caffe/torchvision fine-tuning recipe giving the new last layer lr_mult=10 "
          "(discriminative per-group lr); divergence reports on keypoint/landmark regression "
          "with MSE when the head lr is multiplied (e.g. PyTorch forums 'loss becomes nan "
          "after a few epochs with different lr for last layer').")


class WarmupCosineSGD(torch.optim.SGD):
    """SGD(nesterov) whose groups' lr = base_lr * lr_mult * schedule(step)."""

    def __init__(self, groups, base_lr, warmup, total, **kw):
        super().__init__(groups, lr=base_lr, **kw)
        self.base_lr, self.warmup, self.total, self.t = base_lr, warmup, total, 0

    def factor(self):
        if self.t < self.warmup:
            return (self.t + 1) / self.warmup
        p = (self.t - self.warmup) / max(1, self.total - self.warmup)
        return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, p)))

    @torch.no_grad()
    def step(self, closure=None):
        f = self.factor()
        for g in self.param_groups:
            g["lr"] = self.base_lr * g.get("lr_mult", 1.0) * f
        self.t += 1
        return super().step(closure)


class KeypointNet(nn.Module):
    def __init__(self, k=2):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64),
            nn.AdaptiveAvgPool2d(3), nn.Flatten())
        self.head = nn.Linear(64 * 9, 2 * k)

    def forward(self, x):
        return self.head(self.backbone(x))


def _make_batch(g, n, k=2, size=24):
    coords = torch.rand(n, k, 2, generator=g) * 1.6 - 0.8          # in [-0.8, 0.8]
    lin = torch.linspace(-1, 1, size)
    yy, xx = torch.meshgrid(lin, lin, indexing="ij")
    img = torch.zeros(n, 1, size, size)
    for j in range(k):
        cx = coords[:, j, 0].view(n, 1, 1); cy = coords[:, j, 1].view(n, 1, 1)
        img[:, 0] += (1.0 - 0.25 * j) * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 0.05)
    img += 0.1 * torch.randn(img.shape, generator=g)
    return img, coords.reshape(n, 2 * k)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = KeypointNet()
    steps, warmup = 150, 40
    base_lr = 0.015 * (1.0 + 0.2 * torch.rand(1, generator=g).item())
    head_mult = 1.0 if fixed else 10.0
    groups = [
        {"params": model.backbone.parameters(), "lr_mult": 1.0},
        {"params": model.head.parameters(), "lr_mult": head_mult},
    ]
    opt = WarmupCosineSGD(groups, base_lr=base_lr, warmup=warmup, total=steps,
                          momentum=0.9, nesterov=True, weight_decay=1e-4)
    batches = [_make_batch(g, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
