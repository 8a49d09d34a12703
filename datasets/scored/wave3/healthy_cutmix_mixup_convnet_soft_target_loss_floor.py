"""Small residual ConvNet image classifier trained with CutMix/MixUp (alternating per batch) and a
soft-target cross-entropy and AdamW. It looks alarming: the training loss never gets
near zero (mixed labels put a floor of roughly the entropy of the label mix under the loss), it jumps
every time the batch switches between MixUp and CutMix, and the per-batch mixing ratio lambda (drawn
from Beta(alpha, alpha)) makes it noisy. That is all normal: accuracy on clean images rises and the
loss still falls well below its starting value. Healthy."""
import random
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "CutMix (Yun et al. 2019) / MixUp (Zhang et al. 2018) training as in timm: soft-target CE never approaches 0"

class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1); self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1); self.bn2 = nn.BatchNorm2d(c)
    def forward(self, x):
        return F.relu(x + self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))

class Net(nn.Module):
    def __init__(self, c, n_blocks, n_cls):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.blocks = nn.Sequential(*[ResBlock(c) for _ in range(n_blocks)])
        self.fc = nn.Linear(c, n_cls)
    def forward(self, x):
        return self.fc(self.blocks(F.relu(self.stem(x))).mean((2, 3)))

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12000 + seed)
    cfg = [dict(c=16, nb=2, bs=16, s=16, lr=3e-3, steps=100, alpha=1.0, n_cls=6),
           dict(c=12, nb=3, bs=24, s=12, lr=2e-3, steps=120, alpha=0.4, n_cls=8),
           dict(c=20, nb=1, bs=12, s=20, lr=3e-3, steps=80, alpha=0.8, n_cls=5)][seed % 3]
    n_cls, s = cfg["n_cls"], cfg["s"]
    rng = random.Random(12000 + seed)
    protos = torch.rand(n_cls, 3, 4, 4, generator=g)
    def batch(i):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        x = F.interpolate(protos[y], size=(s, s), mode="nearest") + 0.3 * torch.randn(cfg["bs"], 3, s, s, generator=g)
        t = F.one_hot(y, n_cls).float()
        lam = rng.betavariate(cfg["alpha"], cfg["alpha"])
        perm = torch.randperm(cfg["bs"], generator=g)
        if i % 2 == 0:   # MixUp
            x = lam * x + (1 - lam) * x[perm]
        else:            # CutMix: paste a box, lambda = kept area
            cut = int(s * (1 - lam) ** 0.5)
            r0 = int(torch.randint(0, s - cut + 1, (1,), generator=g)); c0 = int(torch.randint(0, s - cut + 1, (1,), generator=g))
            x = x.clone(); x[:, :, r0:r0 + cut, c0:c0 + cut] = x[perm][:, :, r0:r0 + cut, c0:c0 + cut]
            lam = 1 - cut * cut / (s * s)
        return x, lam * t + (1 - lam) * t[perm]
    batches = [batch(i) for i in range(cfg["steps"])]
    model = Net(cfg["c"], cfg["nb"], n_cls)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.05)
    loss_fn = lambda out, soft: -(soft * F.log_softmax(out, -1)).sum(-1).mean()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=None, scaler=None)
