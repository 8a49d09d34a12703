"""Surface-normal estimation from RGB-D (NYUv2-style): a small fully-convolutional net reads a
4-channel input - RGB in [0, 1] plus the depth map - and regresses the 3-vector normal at
every pixel with an MSE loss against unit normals. The depth channel is fed exactly as the
sensor PNG stores it, uint16 millimetres (800-4000), while the RGB channels are in [0, 1] and
nothing is standardised. The first conv's outputs are dominated by thousands-valued depth terms,
the predicted normals have magnitudes in the tens, the loss is in the hundreds to thousands at
step 0 (a unit-normal MSE should be < 1), and the first SGD-with-momentum update, whose stem
gradient is scaled by the millimetre inputs, overshoots: the loss jumps past 1e20 at step 1 and
the run either turns inf/NaN or stays astronomically large. Converting depth to metres and
standardising it with the dataset mean/std (the only change) trains normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "stem.0"
SOURCE = ("NYU Depth v2 / Kinect depth PNGs in uint16 millimetres fed directly as an input "
          "channel; surface-normal estimation from RGB-D (e.g. Eigen & Fergus 2015 setups)")

HW = 16


class NormalNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.ReLU())
        self.body = nn.Sequential(nn.Conv2d(16, 24, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(24, 24, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(24, 3, 1)

    def forward(self, rgbd):
        return self.head(self.body(self.stem(rgbd)))


def _scene(g, n):
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, HW), torch.linspace(-1, 1, HW), indexing="ij")
    depth, normals = [], []
    for _ in range(n):
        a, b = (torch.rand(2, generator=g) - 0.5).tolist()
        d0 = 1.5 + 2.0 * float(torch.rand(1, generator=g))            # metres
        plane = d0 + a * xs + b * ys
        cx, cy = (torch.rand(2, generator=g) * 1.2 - 0.6).tolist()
        r2 = (xs - cx) ** 2 + (ys - cy) ** 2
        bump = 0.4 * torch.clamp(1 - r2 / 0.25, min=0).sqrt()           # a hemisphere-like object
        d = plane - bump
        gy, gx = torch.gradient(d, spacing=(2.0 / HW, 2.0 / HW))
        nrm = torch.stack([-gx, -gy, torch.ones_like(d)])
        normals.append(nrm / nrm.norm(dim=0, keepdim=True))
        depth.append(d)
    depth, normals = torch.stack(depth), torch.stack(normals)
    light = torch.tensor([0.3, 0.4, 0.87]).view(1, 3, 1, 1)
    shade = (normals * light).sum(1, keepdim=True).clamp(min=0)
    albedo = 0.5 + 0.5 * torch.rand(n, 3, 1, 1, generator=g)
    rgb = (albedo * shade + 0.02 * torch.randn(n, 3, HW, HW, generator=g)).clamp(0, 1)
    return rgb, depth * 1000.0, normals          # depth as stored: millimetres


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = NormalNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    steps = 150
    mean_mm, std_mm = 2500.0, 700.0                   # dataset depth statistics
    batches = []
    for _ in range(steps):
        rgb, depth_mm, normals = _scene(g, 16)
        d = (depth_mm[:, None] - mean_mm) / std_mm if fixed else depth_mm[:, None]
        batches.append((torch.cat([rgb, d], 1), normals))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
