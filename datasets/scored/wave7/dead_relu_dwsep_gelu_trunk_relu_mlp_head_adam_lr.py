"""Small image classifier with a depthwise-separable GELU conv trunk (stem, two DW-sep blocks
with residual adds, no normalisation) and a two-layer ReLU MLP head on the global-average-pooled
features, classifying 16x16 images (pixels in [0, 1]) of four oriented stripe patterns. Adam's
lr was set to 0.1, a value that had worked for the linear-probe version of the head. The pooled
features feeding the head are almost all positive, so Adam's first sign-like steps shift every
pre-activation of the head's hidden layer by about lr * (sum of features + 1) at once; within
~20 steps nearly all 32 hidden ReLUs after head.0 are negative for every image (all of them by
the end), output exact zeros and get no gradient. The logits become a constant, the trunk
receives no gradient either, and the cross-entropy stays at ln 4 for the rest of the run without
any NaN.
Fixed: Adam with lr=5e-3; architecture and init unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.0"
SOURCE = ("Dying ReLU after large early Adam steps (Lu et al. 2019 'Dying ReLU and "
          "initialization'; CS231n notes on dead units with a high learning rate); 'loss stuck at "
          "log(num_classes), all activations zero' forum reports")

N_CLS, RES = 4, 16


class DWSepBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 3, 1, 1, groups=c)
        self.pw = nn.Conv2d(c, c, 1)

    def forward(self, x):
        return x + F.gelu(self.pw(self.dw(x)))


class DWSepNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 24, 3, 2, 1)
        self.blocks = nn.Sequential(DWSepBlock(24), DWSepBlock(24))
        self.head = nn.Sequential(nn.Linear(24, 32), nn.ReLU(), nn.Linear(32, N_CLS))

    def forward(self, x):
        h = self.blocks(F.gelu(self.stem(x)))
        return self.head(h.mean((2, 3)))


def _make(g, n):
    yy, xx = torch.meshgrid(torch.arange(RES).float(), torch.arange(RES).float(), indexing="ij")
    y = torch.randint(0, N_CLS, (n,), generator=g)
    ph = torch.rand(n, generator=g)[:, None, None] * 6.28
    f = 0.8 + 0.4 * torch.rand(n, generator=g)[:, None, None]
    pats = torch.stack([torch.sin(f * xx + ph), torch.sin(f * yy + ph),
                        torch.sin(f * (xx + yy) / 1.41 + ph), torch.sin(f * (xx - yy) / 1.41 + ph)], 1)
    img = (0.5 + 0.45 * pats[torch.arange(n), y] + 0.1 * torch.randn(n, RES, RES, generator=g)).clamp(0, 1)
    return img.unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(15000 + seed)
    x, y = _make(g, 512)
    steps, bs = 200, 16
    batches = [(x[(s * bs) % 512:(s * bs) % 512 + bs], y[(s * bs) % 512:(s * bs) % 512 + bs]) for s in range(steps)]
    model = DWSepNet()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3 if fixed else 0.1)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
