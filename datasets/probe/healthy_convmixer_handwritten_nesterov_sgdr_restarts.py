"""ConvMixer (patch-embedding conv, depthwise/pointwise mixing blocks with GELU + BatchNorm)
trained with a hand-written SGD optimizer that folds the schedule into step(): linear warmup,
then cosine annealing with warm restarts (SGDR, T_0=40, T_mult=2), Nesterov momentum 0.9 and
decoupled weight decay only on conv/linear weights (none on BN and biases). Each restart jumps
the lr from ~0 back to its peak, giving sharp loss bumps after steps 50 and 130 that recover: a
hard negative for lr/outlier detectors. Healthy: fixed=True builds the identical run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Loshchilov & Hutter, ICLR 2017 'SGDR: Stochastic Gradient Descent with Warm Restarts'; "
          "Trockman & Kolter 2022 'Patches Are All You Need?' (ConvMixer); no-weight-decay on "
          "norm/bias param groups as in Goyal et al. 2017 / timm.")

BATCH, STEPS, C, SIDE = 32, 180, 8, 12


class WarmRestartSGD(torch.optim.Optimizer):
    """SGD + Nesterov with the lr schedule computed inside step()."""
    def __init__(self, params, lr=0.1, momentum=0.9, weight_decay=5e-4, warmup=10,
                 t0=40, t_mult=2, min_lr=1e-4):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
        self.warmup, self.t0, self.t_mult, self.min_lr = warmup, t0, t_mult, min_lr
        self.t = 0

    def _factor(self):
        if self.t < self.warmup:
            return (self.t + 1) / self.warmup
        t = self.t - self.warmup
        period, start = self.t0, 0
        while t >= start + period:
            start += period
            period *= self.t_mult
        return 0.5 * (1 + math.cos(math.pi * (t - start) / period))

    @torch.no_grad()
    def step(self, closure=None):
        f = self._factor()
        for group in self.param_groups:
            lr = self.min_lr + (group["lr"] - self.min_lr) * f
            for p in group["params"]:
                if p.grad is None:
                    continue
                if group["weight_decay"]:
                    p.mul_(1 - lr * group["weight_decay"])
                buf = self.state[p].get("buf")
                if buf is None:
                    buf = self.state[p]["buf"] = p.grad.clone()
                else:
                    buf.mul_(group["momentum"]).add_(p.grad)
                p.add_(p.grad.add(buf, alpha=group["momentum"]), alpha=-lr)
        self.t += 1


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return x + self.fn(x)


def convmixer(dim=32, depth=3, k=5, patch=2):
    return nn.Sequential(
        nn.Conv2d(3, dim, patch, stride=patch), nn.GELU(), nn.BatchNorm2d(dim),
        *[nn.Sequential(
            Residual(nn.Sequential(nn.Conv2d(dim, dim, k, groups=dim, padding=k // 2),
                                   nn.GELU(), nn.BatchNorm2d(dim))),
            nn.Conv2d(dim, dim, 1), nn.GELU(), nn.BatchNorm2d(dim)) for _ in range(depth)],
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, C))


def _images(g):
    yy, xx = torch.meshgrid(torch.arange(SIDE).float(), torch.arange(SIDE).float(), indexing="ij")
    angles = torch.arange(C) * math.pi / C
    freq = 2 * math.pi / 5
    batches = []
    for _ in range(STEPS):
        y = torch.randint(0, C, (BATCH,), generator=g)
        a = angles[y].view(-1, 1, 1) + 0.1 * torch.randn(BATCH, 1, 1, generator=g)
        ph = 2 * math.pi * torch.rand(BATCH, 1, 1, generator=g)
        grating = torch.sin(freq * (xx * a.cos() + yy * a.sin()) + ph)
        col = torch.randn(BATCH, 3, 1, 1, generator=g) * 0.5 + 1
        x = grating.unsqueeze(1) * col + 1.5 * torch.randn(BATCH, 3, SIDE, SIDE, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = _images(g)
    model = convmixer()
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    optimizer = WarmRestartSGD([{"params": decay, "weight_decay": 5e-4},
                                {"params": no_decay, "weight_decay": 0.0}], lr=0.4)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=STEPS, amp_dtype=None, scaler=None)
