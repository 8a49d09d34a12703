"""VDSR-style residual super-resolution CNN trained with Adam on LDR patches in [0, 1]. The patch
sampler also reads a linear-light HDR (EXR) frame: one early training patch contains an unclipped
specular highlight with radiance values in the tens of thousands. Its MSE gradient is ~1e6 times the
normal one; Adam's second-moment estimate v absorbs it and, with beta2 = 0.999, stays inflated
for thousands of steps, so every later update is scaled down by ~1e3 and the network is
effectively frozen. Nothing becomes NaN: the loss just stops improving after that batch (a silent
stall). Fixed: the patch is tone-clipped to [0, 1] like the rest of the data."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "HDR/EXR images mixed into LDR super-resolution/denoising training sets; Adam second-moment poisoning by a single huge gradient (Kingma & Ba beta2 memory)"


class VDSR(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = [nn.Conv2d(1, width, 3, padding=1), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(width, width, 3, padding=1), nn.ReLU()]
        layers.append(nn.Conv2d(width, 1, 3, padding=1))
        self.body = nn.Sequential(*layers)

    def forward(self, lr_up):
        return lr_up + self.body(lr_up)


def _patches(g, n, size=16):
    # smooth random images with edges
    base = torch.rand(n, 1, size // 4, size // 4, generator=g)
    hr = F.interpolate(base, size=(size, size), mode="bilinear", align_corners=False)
    edges = (torch.rand(n, 1, size, size, generator=g) > 0.85).float() * 0.3
    hr = (hr + F.avg_pool2d(edges, 3, 1, 1)).clamp(0, 1)
    lr = F.avg_pool2d(hr, 2)
    lr_up = F.interpolate(lr, scale_factor=2, mode="nearest")
    return lr_up, hr


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    width = [16, 20, 24][seed % 3]
    depth = [5, 4, 3][seed % 3]
    bs = [16, 12, 20][seed % 3]
    steps = [100, 120, 90][seed % 3]
    bad_step = [3, 1, 2][seed % 3]
    lr = [1e-3, 2e-3, 1e-3][seed % 3]
    pool = [_patches(g, bs) for _ in range(25)]
    batches = [pool[i % 25] for i in range(steps)]
    x, y = batches[bad_step]
    x, y = x.clone(), y.clone()
    hot = 20000.0 + 30000.0 * torch.rand(1, generator=g).item()   # linear radiance of a specular highlight
    y[0, :, 2:14, 2:14] *= hot
    x[0] = F.interpolate(F.avg_pool2d(y[:1], 2), scale_factor=2, mode="nearest")[0]
    if fixed:
        x, y = x.clamp(0, 1), y.clamp(0, 1)
    batches[bad_step] = (x, y)
    model = VDSR(width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, t: F.mse_loss(o, t),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
