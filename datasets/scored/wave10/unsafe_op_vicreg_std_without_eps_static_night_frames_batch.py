"""VICReg (Bardes et al. 2022) on small camera-trap frames: conv encoder + MLP expander,
loss = 25 * invariance (MSE between views) + 25 * variance hinge mean(relu(1 - std_j)) +
1 * off-diagonal covariance. The variance term was written as torch.sqrt(z.var(dim=0)),
dropping the reference code's + 1e-4. The run is calm until step 80, where the sampler hands
out a batch of frames from a camera that was capped at night: every frame is black, crops /
flips / brightness jitter of black are black, every embedding in the batch is identical and
var = 0 for every dimension. sqrt's backward at 0 is inf, multiplied by var's zero gradient it
gives NaN, and the NaN gradients wreck the weights. Fixed: std = sqrt(var + 1e-4), as in the
reference implementation; the data are unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "expander.3"
SOURCE = ("VICReg official code: std_x = torch.sqrt(x.var(dim=0) + 0.0001); sqrt(0) backward "
          "NaN reports (pytorch/pytorch 'gradient of sqrt at zero is nan')")


class VICReg(nn.Module):
    def __init__(self, e=64):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.expander = nn.Sequential(nn.Linear(32, 128), nn.BatchNorm1d(128), nn.ReLU(),
                                      nn.Linear(128, e))

    def forward(self, v1, v2):
        return self.expander(self.encoder(v1)), self.expander(self.encoder(v2))


def make_vicreg_loss(eps):
    def std_of(z):
        v = z.var(dim=0)
        return torch.sqrt(v + eps) if eps > 0 else torch.sqrt(v)

    def loss_fn(out, _t):
        z1, z2 = out
        n, d = z1.shape
        inv = F.mse_loss(z1, z2)
        var = F.relu(1 - std_of(z1)).mean() + F.relu(1 - std_of(z2)).mean()
        z1c, z2c = z1 - z1.mean(0), z2 - z2.mean(0)
        c1, c2 = z1c.t() @ z1c / (n - 1), z2c.t() @ z2c / (n - 1)
        off = lambda c: (c ** 2).sum() - (torch.diagonal(c) ** 2).sum()
        cov = off(c1) / d + off(c2) / d
        return 25 * inv + 25 * var + cov
    return loss_fn


def _frames(g, n, size=16):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    cx, cy = (torch.rand(n, 2, generator=g) * 1.4 - 0.7).unbind(1)
    r = 0.2 + 0.3 * torch.rand(n, generator=g)
    blob = torch.exp(-((xx - cx[:, None, None]) ** 2 + (yy - cy[:, None, None]) ** 2) / r[:, None, None] ** 2)
    bg = 0.3 * torch.rand(n, 1, 1, generator=g) * (1 + yy)
    return (blob + bg)[:, None]


def _augment(g, x):
    flip = torch.rand(x.shape[0], generator=g) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(-1), x)
    shift = int(torch.randint(-2, 3, (1,), generator=g))
    x = torch.roll(x, shift, dims=-2)
    return x * (0.7 + 0.6 * torch.rand(x.shape[0], 1, 1, 1, generator=g))   # brightness jitter


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(13000 + seed)
    model = VICReg()
    steps, bs = 140, 64
    batches = []
    for s in range(steps):
        x = _frames(g, bs)
        if s == 80:
            x = torch.zeros_like(x)          # capped camera at night: all frames black
        batches.append(((_augment(g, x), _augment(g, x)), None))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=make_vicreg_loss(1e-4 if fixed else 0.0),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
