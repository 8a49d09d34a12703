"""EDSR-style residual image denoiser (head conv -> residual blocks conv-ReLU-conv with identity
skips -> tail conv, predicting the noise residual). The "zero-init the last conv of each residual
branch" trick was implemented as a loop that zeroes *every* Conv2d weight, including the head and
the tail. With a zero head every feature map is exactly zero, every ReLU input is zero, and all conv
weight gradients are zero (the only trainable signal is the tail bias, which can only learn the
~zero mean of the noise). The loss sits at the noise variance forever: a silent stall with perfectly
finite numbers. ORIGIN is the head conv, the first layer whose zero weights cut the signal. Fix: the
default Kaiming init (zero-init only the branch-final convs)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "head"
SOURCE = "EDSR / 'zero-init residual' (Goyal et al. 2017) applied to all convs by an over-broad init loop"

class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return x + self.conv2(F.relu(self.conv1(x)))

class Denoiser(nn.Module):
    def __init__(self, c, n_blocks):
        super().__init__()
        self.head = nn.Conv2d(1, c, 3, padding=1)
        self.body = nn.Sequential(*[Block(c) for _ in range(n_blocks)])
        self.tail = nn.Conv2d(c, 1, 3, padding=1)
    def forward(self, noisy):
        return self.tail(F.relu(self.body(self.head(noisy))))

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    cfg = [dict(c=16, nb=2, bs=8, s=24, lr=1e-3, steps=80, sigma=0.2),
           dict(c=12, nb=3, bs=6, s=28, lr=2e-3, steps=60, sigma=0.3),
           dict(c=20, nb=1, bs=10, s=20, lr=1e-3, steps=100, sigma=0.15)][seed % 3]
    model = Denoiser(cfg["c"], cfg["nb"])
    for name, m in model.named_modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                if name.endswith("conv2"):
                    nn.init.zeros_(m.weight)   # zero-init only the residual-branch outputs
            else:
                nn.init.zeros_(m.weight)       # bug: every conv
            nn.init.zeros_(m.bias)
    def batch():
        base = torch.rand(cfg["bs"], 1, cfg["s"] // 4, cfg["s"] // 4, generator=g)
        clean = F.interpolate(base, size=(cfg["s"], cfg["s"]), mode="bilinear", align_corners=False)
        noise = cfg["sigma"] * torch.randn(clean.shape, generator=g)
        return clean + noise, noise
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loss_fn = lambda out, y: F.mse_loss(out, y) / (y.var() + 1e-12)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=None, scaler=None)
