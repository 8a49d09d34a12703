"""SpyNet-style coarse-to-fine optical flow, BN-free basic modules, Caffe Gaussian(0, 0.01) init.

Mechanism: every pyramid level has a small BN-free "basic module" G_k (a stack of 3x3 convs with
ReLU, as in SpyNet) that takes [I1, warp(I2, up(V)), up(V)] and predicts a residual flow.  The
weights are drawn with the Caffe-era recipe `nn.init.normal_(w, 0, 0.01)` and zero biases.  With
fan-ins of 36-360, std 0.01 gives a per-layer gain of roughly 0.05-0.15 through the ReLUs, so the
activation scale shrinks geometrically through the conv stack from the first step: the
predicted flows are ~1e-6 to 1e-5 px, and the gradients reaching all but the last conv are
tinier still.  Plain SGD cannot recover from that, and the end-point error stays where it
started (a stall, no non-finite value).

ORIGIN: "level0.convs.0", the first conv of the coarsest basic module; it is the first layer
whose output is already ~10x too small, and the collapse of the signal compounds from there.

Fix: Kaiming (He) normal init for the ReLU convs (fan_in, gain sqrt(2)); the last (flow
output) conv of each module keeps the small init so the initial flow is near zero.  Nothing else
changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "level0.convs.0"
SOURCE = ("Ranjan & Black, SpyNet (CVPR 2017) basic modules without BatchNorm; Caffe-style "
          "gaussian std=0.01 weight_filler copied into PyTorch ports (vanishing signal in deep "
          "plain conv stacks, He et al. 2015 sec. 2.2)")


def _smooth_texture(g, n, size):
    base = torch.randn(n, 1, size // 4 + 2, size // 4 + 2, generator=g)
    img = F.interpolate(base, size=(size, size), mode="bicubic", align_corners=False)
    fine = F.interpolate(torch.randn(n, 1, size // 2, size // 2, generator=g), size=(size, size),
                         mode="bilinear", align_corners=False)
    return img + 0.4 * fine


def _warp(img, flow):
    n, _, h, w = img.shape
    ys, xs = torch.meshgrid(torch.arange(h, dtype=img.dtype), torch.arange(w, dtype=img.dtype),
                            indexing="ij")
    gx = (xs[None] + flow[:, 0]) / (w - 1) * 2 - 1
    gy = (ys[None] + flow[:, 1]) / (h - 1) * 2 - 1
    grid = torch.stack([gx, gy], dim=-1)
    return F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=True)


class BasicModule(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        chans = [4] + [width] * depth + [2]
        self.convs = nn.ModuleList(nn.Conv2d(chans[i], chans[i + 1], 3, padding=1)
                                   for i in range(len(chans) - 1))

    def forward(self, x):
        for i, c in enumerate(self.convs):
            x = c(x)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


class SpyNetLite(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.level0 = BasicModule(width, depth)
        self.level1 = BasicModule(width, depth)

    def forward(self, pair):
        i1, i2 = pair[:, :1], pair[:, 1:]
        c1, c2 = F.avg_pool2d(i1, 2), F.avg_pool2d(i2, 2)
        v = torch.zeros(i1.shape[0], 2, c1.shape[2], c1.shape[3])
        v = v + self.level0(torch.cat([c1, _warp(c2, v), v], 1))
        v = F.interpolate(v, scale_factor=2, mode="bilinear", align_corners=False) * 2.0
        v = v + self.level1(torch.cat([i1, _warp(i2, v), v], 1))
        return v


def _epe(pred, flow):
    return ((pred - flow) ** 2).sum(1).add(1e-8).sqrt().mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [24, 32, 40][seed % 3]
    depth = [4, 5, 4][seed % 3]
    lr = [0.05, 0.04, 0.06][seed % 3]
    batch = [16, 12, 20][seed % 3]
    steps = 200
    size = 16
    model = SpyNetLite(width, depth)
    for mod in (model.level0, model.level1):
        for i, c in enumerate(mod.convs):
            last = i == len(mod.convs) - 1
            if fixed:
                if last:
                    nn.init.normal_(c.weight, 0.0, 0.01)
                else:
                    nn.init.kaiming_normal_(c.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(c.weight, 0.0, 0.01)
            nn.init.zeros_(c.bias)
    batches = []
    for _ in range(steps):
        i1 = _smooth_texture(g, batch, size)
        # per-sample flow: random translation plus a mild affine part (zero mean over data)
        t = (torch.rand(batch, 2, 1, 1, generator=g) * 2 - 1) * 2.0
        a = (torch.rand(batch, 2, 2, generator=g) * 2 - 1) * 0.04
        ys, xs = torch.meshgrid(torch.arange(size, dtype=torch.float32) - size / 2,
                                torch.arange(size, dtype=torch.float32) - size / 2, indexing="ij")
        fx = t[:, 0] + a[:, 0, 0, None, None] * xs + a[:, 0, 1, None, None] * ys
        fy = t[:, 1] + a[:, 1, 0, None, None] * xs + a[:, 1, 1, None, None] * ys
        flow = torch.stack([fx, fy], 1)
        i2 = _warp(i1, -flow)  # i2(x + flow) = i1(x)  (approximately)
        batches.append((torch.cat([i1, i2], 1), flow))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": _epe, "batches": batches, "steps": steps}
