"""SimCLR (NT-Xent, temperature 0.2) on small grey-scale frames with a 3-block CNN + MLP
projector, AdamW.

Mechanism: the input pipeline standardises every frame by its own mean and std
(``(x - x.mean()) / x.std()``, the common "per-image whitening" transform).  The frame stream
is otherwise clean, but one batch (its position depends on the seed) contains a few blank
frames from a dropped camera feed: constant images with std == 0, which the transform turns
into 0/0 = NaN pixels.  Both augmented views of those frames are NaN, the first convolution
propagates NaN into every feature map, BatchNorm mixes them into the whole batch, the NT-Xent
loss of that step is NaN and the AdamW update writes NaN into every weight.

ORIGIN: ``encoder.0`` - the first convolution is the first module the corrupt frames reach
(the model is sound; the data is the root, this is the first layer that sees it).

Fix: filter the batch - drop the non-finite frames (both views) before the step, as a
``torch.isfinite(x).all()`` check in the loader would.  The same batch, model and steps
otherwise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("SimCLR/contrastive training going NaN on one batch: blank/constant images divided "
          "by a zero per-image std in a standardise transform (common PyTorch forum / GitHub "
          "issue pattern 'loss becomes nan after some iterations')")


class SimCLRNet(nn.Module):
    def __init__(self, c, proj):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
            nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.BatchNorm2d(2 * c), nn.ReLU(),
            nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1), nn.BatchNorm2d(2 * c), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.projector = nn.Sequential(nn.Linear(2 * c, 2 * c), nn.ReLU(), nn.Linear(2 * c, proj))

    def forward(self, xa, xb):
        return self.projector(self.encoder(torch.cat([xa, xb])))


def nt_xent(z, target, tau=0.2):
    z = F.normalize(z, dim=1)
    n2 = z.shape[0]
    n = n2 // 2
    sim = z @ z.T / tau
    sim = sim.masked_fill(torch.eye(n2, dtype=torch.bool), -1e9)
    pos = torch.cat([torch.arange(n, n2), torch.arange(0, n)])
    return F.cross_entropy(sim, pos)


def _frames(g, bs, size):
    # oriented gratings + a blob at a random position: a toy "scene" stream
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    th = 3.14 * torch.rand(bs, 1, 1, generator=g)
    fr = 0.3 + 0.5 * torch.rand(bs, 1, 1, generator=g)
    grat = torch.sin(fr * (xx * torch.cos(th) + yy * torch.sin(th)))
    cy, cx = (size * torch.rand(2, bs, 1, 1, generator=g))
    blob = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8.0)
    return 0.5 + 0.25 * grat + 0.5 * blob


def _aug(g, x):
    bs, size = x.shape[0], x.shape[-1]
    shifts = torch.randint(-2, 3, (bs, 2), generator=g)
    out = torch.stack([torch.roll(x[i], tuple(shifts[i].tolist()), dims=(0, 1)) for i in range(bs)])
    flip = torch.rand(bs, 1, 1, generator=g) < 0.5
    out = torch.where(flip, out.flip(-1), out)
    out = out * (0.8 + 0.4 * torch.rand(bs, 1, 1, generator=g)) + 0.05 * torch.randn(out.shape, generator=g)
    return out


def _standardise(x):
    m = x.mean(dim=(1, 2), keepdim=True)
    s = x.std(dim=(1, 2), keepdim=True)
    return ((x - m) / s).unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    c = [12, 16, 8][seed % 3]
    proj = [32, 48, 64][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    steps = 90
    size = 16
    bad_step = [23, 41, 57][seed % 3] + seed // 3
    batches = []
    for step in range(steps):
        x = _frames(g, bs, size)
        keep = torch.ones(bs, dtype=torch.bool)
        if step == bad_step:
            idx = torch.randperm(bs, generator=g)[: 2 + seed % 3]
            x[idx] = 0.0          # dropped feed: blank frames
        xa = _aug(g, x)
        xb = _aug(g, x)
        if step == bad_step:
            xa[idx] = 0.0         # augmentation leaves a blank frame blank (no noise on empty)
            xb[idx] = 0.0
        xa, xb = _standardise(xa), _standardise(xb)
        if fixed:
            keep = torch.isfinite(xa).flatten(1).all(1) & torch.isfinite(xb).flatten(1).all(1)
            xa, xb = xa[keep], xb[keep]
        batches.append(((xa, xb), torch.zeros(int(keep.sum()))))
    model = SimCLRNet(c, proj)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=nt_xent, batches=batches, steps=steps)
