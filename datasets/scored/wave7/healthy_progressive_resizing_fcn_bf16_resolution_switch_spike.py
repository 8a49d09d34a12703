"""Healthy run: progressive resizing (fast.ai / "FixRes"-style train-small-then-large) for a
fully-convolutional BatchNorm classifier with global average pooling, trained under bfloat16
autocast with Nesterov SGD and a cosine lr schedule (stepped by an optimiser post-step hook).
The first 60 steps use 12x12 downsampled copies of the images, the last 60 the full 24x24 ones.
At the switch the apparent spatial frequency of every texture halves and the BatchNorm batch
statistics shift, so the loss jumps back up (a spike 10-30x the running loss) and then settles
back close to its pre-switch level over the next ~20 steps; bf16 also makes the per-step loss a
little noisy. Nothing is wrong: the spike is the expected cost of the resolution change.
fixed=True returns the same run."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("fast.ai progressive resizing (DAWNBench ImageNet runs); Touvron et al. 2019 'Fixing the "
          "train-test resolution discrepancy' (FixRes): loss jumps when the training resolution changes")

RES, N_CLS = 24, 4


def _block(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class FCNClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(_block(1, 16, 1), _block(16, 32, 2), _block(32, 32, 1))
        self.fc = nn.Linear(32, N_CLS)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


def _make(g, n):
    yy, xx = torch.meshgrid(torch.arange(RES).float(), torch.arange(RES).float(), indexing="ij")
    y = torch.randint(0, N_CLS, (n,), generator=g)
    theta = y.float() * math.pi / 4 + 0.15 * torch.randn(n, generator=g)
    f = 0.9 + 0.3 * torch.rand(n, generator=g)
    ph = torch.rand(n, generator=g) * 6.28
    proj = xx[None] * theta.cos()[:, None, None] + yy[None] * theta.sin()[:, None, None]
    img = torch.sin(f[:, None, None] * proj + ph[:, None, None]) + 0.6 * torch.randn(n, RES, RES, generator=g)
    return img.unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(22000 + seed)
    x, y = _make(g, 512)
    x_small = F.avg_pool2d(x, 2)
    steps, bs, switch = 120, 32, 60
    batches = []
    for s in range(steps):
        i = (s * bs) % 512
        xs = x_small if s < switch else x
        batches.append((xs[i:i + bs], y[i:i + bs]))
    model = FCNClassifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 0.5 * (1 + math.cos(math.pi * min(t, steps) / steps)))
    opt.register_step_post_hook(lambda o, a, k: sched.step())
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16, scaler=None)
