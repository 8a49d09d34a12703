"""HRNet-style two-resolution depth regressor fed raw 0-255 pixels and raw millimetre depth.

Mechanism
---------
Monocular depth estimation with a small HRNet-like network: a high-resolution branch
and a half-resolution branch run in parallel and are fused once or twice (high->low by a
strided 3x3 conv, low->high by 1x1 conv + bilinear upsampling, summed, ReLU), then a
head concatenates both resolutions and regresses one depth value per pixel with an MSE
loss, optimised by SGD with momentum, a plain baseline recipe.

The data pipeline skips normalisation: images are the raw uint8 values cast to float
(0..255) and ground-truth depth is the raw 16-bit PNG value in millimetres
(NYU-/ScanNet-style sensors store depth as uint16 mm, roughly 500..10000).  From step 0
the targets are thousands of units away from the network's output range, so the MSE
starts at ~1e7 (mm^2).  Its gradient w.r.t. the output is ~2*(pred - depth) ~ 1e4 per
pixel, and every weight gradient is multiplied again by the ~100x too large inputs and
activations (they come from 0..255 pixels).  The very first SGD step, at an lr that is
normal for this network on standardised data, moves the weights by orders of magnitude
more than their own size.  The next forward pass overflows: the loss is inf/NaN at step 1.

ORIGIN = None: nothing inside the network is at fault.  Both the inputs and the
targets are wrong at the source, before any layer.

Seed variation: image size, widths, number of fusion stages, depth range, batch size,
learning rate.

Fix: standardise the inputs (x/255, then per-channel mean/std) and the targets
(metres, then z-score with the dataset mean/std).  Same frames, model, optimiser, lr, loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("Common monocular-depth mistake (NYU Depth v2 / ScanNet depth PNGs are uint16 millimetres): "
          "training on raw depth values and raw 0-255 images with MSE; forum threads 'depth estimation loss is "
          "huge then NaN after the first iteration' where the fix is dividing by 255/1000 and normalising")


class Fuse(nn.Module):
    def __init__(self, ch, cl):
        super().__init__()
        self.high = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1))
        self.low = nn.Sequential(nn.Conv2d(cl, cl, 3, padding=1), nn.ReLU(), nn.Conv2d(cl, cl, 3, padding=1))
        self.h2l = nn.Conv2d(ch, cl, 3, stride=2, padding=1)
        self.l2h = nn.Conv2d(cl, ch, 1)

    def forward(self, xh, xl):
        h = self.high(xh) + xh
        l = self.low(xl) + xl
        up = F.interpolate(self.l2h(l), size=h.shape[-2:], mode="bilinear", align_corners=False)
        return F.relu(h + up), F.relu(l + self.h2l(h))


class HRDepth(nn.Module):
    def __init__(self, ch, cl, n_fuse):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(ch, cl, 3, stride=2, padding=1), nn.ReLU())
        self.fuse = nn.ModuleList([Fuse(ch, cl) for _ in range(n_fuse)])
        self.head = nn.Sequential(nn.Conv2d(ch + cl, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, 1, 1))

    def forward(self, x):
        h = self.stem(x)
        l = self.down(h)
        for f in self.fuse:
            h, l = f(h, l)
        l = F.interpolate(l, size=h.shape[-2:], mode="bilinear", align_corners=False)
        return self.head(torch.cat([h, l], 1))


def _scene(g, b, s, dmin, dmax):
    """Raw frames: uint8-range RGB and uint16-style millimetre depth."""
    yy = torch.linspace(0, 1, s).view(1, 1, s, 1).expand(b, 1, s, s)
    xx = torch.linspace(0, 1, s).view(1, 1, 1, s).expand(b, 1, s, s)
    horizon = 0.25 + 0.3 * torch.rand(b, 1, 1, 1, generator=g)
    # floor: far at the horizon, near at the bottom; above the horizon: a far wall
    t = ((yy - horizon) / (1 - horizon)).clamp(min=0.0)
    depth = dmax - (dmax - dmin) * t
    for _ in range(3):  # boxes standing on the floor, closer than the background
        cx = torch.rand(b, 1, 1, 1, generator=g)
        w = 0.08 + 0.15 * torch.rand(b, 1, 1, 1, generator=g)
        top = horizon + 0.1 * torch.rand(b, 1, 1, 1, generator=g)
        dbox = dmin + (dmax - dmin) * (0.2 + 0.5 * torch.rand(b, 1, 1, 1, generator=g))
        inside = ((xx - cx).abs() < w) & (yy > top)
        depth = torch.where(inside, torch.minimum(depth, dbox), depth)
    # appearance: brightness falls with distance (light fall-off), a colour cast for near objects, noise
    rel = (depth - dmin) / (dmax - dmin)
    r = 230 - 170 * rel
    gch = 200 - 120 * rel + 20 * torch.sin(12 * xx)
    bch = 90 + 120 * rel
    img = torch.cat([r, gch, bch], 1) + 12 * torch.randn(b, 3, s, s, generator=g)
    img = img.clamp(0, 255).round()
    depth = depth.round()  # stored as integer millimetres
    return img, depth


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    s = [24, 32, 28][seed % 3]
    ch, cl = [(8, 12), (10, 16), (12, 16)][(seed // 3) % 3]
    n_fuse = 1 + seed % 2
    b = [4, 6, 8][(seed + 2) % 3]
    dmin, dmax = [(500.0, 8000.0), (400.0, 10000.0), (800.0, 6500.0)][(seed + 1) % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    steps = 200

    model = HRDepth(ch, cl, n_fuse)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    raw = [_scene(g, b, s, dmin, dmax) for _ in range(steps)]

    if fixed:
        imgs = torch.cat([x for x, _ in raw]) / 255.0
        mu = imgs.mean(dim=(0, 2, 3), keepdim=True)
        sd = imgs.std(dim=(0, 2, 3), keepdim=True)
        deps = torch.cat([y for _, y in raw]) / 1000.0
        dmu, dsd = deps.mean(), deps.std()
        batches = [((x / 255.0 - mu) / sd, (y / 1000.0 - dmu) / dsd) for x, y in raw]
    else:
        batches = raw

    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
