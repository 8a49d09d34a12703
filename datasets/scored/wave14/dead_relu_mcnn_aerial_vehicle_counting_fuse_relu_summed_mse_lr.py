"""MCNN (multi-column CNN, Zhang et al. CVPR 2016) counting vehicles in aerial parking-lot
images (CARPK / PUCPR style): three BN-free columns with 9x9 / 7x7 / 5x5 kernels and two
2x2 max-pools, concatenated and fused by a 1x1 conv that -- as in the widely used
crowdcount-mcnn code, whose Conv2d wrapper has relu=True by default -- is followed by a ReLU
so the density map is non-negative. Loss: pixel-wise MSE with ``size_average=False``
(summed), as in CSRNet-style counting code; the columns use Kaiming init and the fuse conv
N(0, 0.01), so the initial density map is ~0.

Mechanism: the summed loss makes the gradients ~H*W*batch times larger than a mean-reduced
loss, which is why such code trains with lr ~1e-6. Training "looked slow", so the lr was
raised to 5e-5 (~30x). Within the first 2-5 momentum-SGD steps one update overshoots, the
density map jumps to huge values everywhere (one loss spike), and the correcting update
shoves the fuse conv's bias and weights far negative: the fuse pre-activation is then
negative at every pixel of every image, the output ReLU returns all zeros and passes no
gradient back. Nothing trains any more and the loss freezes at sum(target^2) -- "the model
predicts count 0" for the rest of the run.

ORIGIN: ``fuse.1`` -- the output ReLU of the fuse layer is the unit that dies; the columns
are fine but cut off behind it.

Fix: keep the lr scaled for the summed loss (1e-3 / (density pixels per batch) ~ 1.5e-6, x
the per-seed multiplier); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "fuse.1"
SOURCE = ('MCNN (Zhang et al., CVPR 2016) with a ReLU on the 1x1 fuse conv '
          "(crowdcount-mcnn's Conv2d wrapper defaults to relu=True) and CSRNet-style "
          "MSELoss(size_average=False) that needs a tiny lr; known 'density map all zeros / "
          "count 0' failure after raising the lr")


def column(k, widths):
    c1, c2, c3, c4 = widths
    p = k // 2
    return nn.Sequential(
        nn.Conv2d(3, c1, k, padding=p), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, k - 2, padding=p - 1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Conv2d(c2, c3, k - 2, padding=p - 1), nn.ReLU(inplace=True),
        nn.Conv2d(c3, c4, k - 2, padding=p - 1), nn.ReLU(inplace=True))


class MCNN(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.branch1 = column(9, (w, 2 * w, w, w // 2))
        self.branch2 = column(7, (w + 4, 2 * w + 8, w + 4, w // 2 + 2))
        self.branch3 = column(5, (w + 8, 2 * w + 16, w + 8, w // 2 + 4))
        c = (w // 2) + (w // 2 + 2) + (w // 2 + 4)
        self.fuse = nn.Sequential(nn.Conv2d(c, 1, 1), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.fuse(torch.cat([self.branch1(x), self.branch2(x), self.branch3(x)], 1))


def make_batch(g, bs, size, max_cars):
    """Grey asphalt with lane marks and cars (small coloured rectangles); density map =
    Gaussian at each car centre, computed at 1/4 resolution and summing to the count."""
    x = 0.35 + 0.05 * torch.randn(bs, 3, size, size, generator=g)
    x[:, :, :, :: size // 4] += 0.3
    ds = size // 4
    yy, xx = torch.meshgrid(torch.arange(ds).float(), torch.arange(ds).float(), indexing="ij")
    dens = torch.zeros(bs, 1, ds, ds)
    for i in range(bs):
        n = int(torch.randint(max_cars // 2, max_cars + 1, (1,), generator=g))
        for _ in range(n):
            r = int(torch.randint(2, size - 8, (1,), generator=g))
            c = int(torch.randint(2, size - 6, (1,), generator=g))
            col = torch.rand(3, 1, 1, generator=g)
            x[i, :, r:r + 6, c:c + 4] = col + 0.1
            cy, cx = (r + 3) / 4.0, (c + 2) / 4.0
            gk = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * 1.5 ** 2))
            dens[i, 0] += gk / gk.sum()
    return x, dens * 100.0          # density scaled x100 as in many counting repos


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(w=8, bs=4, size=48, max_cars=12, mult=1.0, steps=60),
        dict(w=12, bs=3, size=64, max_cars=20, mult=0.5, steps=50),
        dict(w=8, bs=6, size=40, max_cars=8, mult=2.0, steps=70),
    ][seed % 3]
    torch.manual_seed(seed)
    model = MCNN(cfg["w"])
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)
    nn.init.normal_(model.fuse[0].weight, 0.0, 0.01)   # initial density map ~ 0
    pixels = cfg["bs"] * (cfg["size"] // 4) ** 2
    lr = (1e-3 / pixels if fixed else 5e-5) * cfg["mult"]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    g = torch.Generator().manual_seed(40 + seed)
    batches = [make_batch(g, cfg["bs"], cfg["size"], cfg["max_cars"]) for _ in range(cfg["steps"])]
    loss_fn = nn.MSELoss(reduction="sum")           # size_average=False
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
