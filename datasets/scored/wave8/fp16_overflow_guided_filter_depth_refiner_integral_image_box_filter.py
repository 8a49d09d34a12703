"""Guided-filter depth upsampling (Deep Guided Filter style) trained under fp16 autocast. A small
CNN predicts metric depth at 1/4 resolution (BTS-style head: max_depth * sigmoid), the depth is
bilinearly upsampled and refined by a differentiable guided filter driven by the full-resolution
luminance image. The guided filter's box means are computed with a hand-written summed-area
table (2-D integral image: cumsum over H, then over W, then four-corner differences). The
integral image of the half-precision depth map accumulates metres over the whole 144x144 frame
(~5 m x 20736 px), which passes 65504, so the table holds +inf and the corner differences give
inf - inf = NaN: the very first loss is NaN. A GradScaler is present but cannot help, the overflow
is in the forward pass. Fix: compute the integral image in fp32 (cast before the cumsums);
the CNN stays in fp16."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "refine.box"
SOURCE = ("He et al. guided filter / Wu et al. 'Fast End-to-End Trainable Guided Filter' (DGF) for "
          "depth and image upsampling; summed-area-table box filters are a known fp16 hazard "
          "(integral images must be accumulated in fp32, cf. OpenCV integral() returning CV_32S/CV_64F)")


class IntegralBoxFilter(nn.Module):
    def __init__(self, r, fp32=False):
        super().__init__()
        self.r, self.fp32 = r, fp32

    def forward(self, x):
        r = self.r
        if self.fp32:
            x = x.float()
        s = F.pad(x.cumsum(2).cumsum(3), (1, 0, 1, 0))          # summed-area table
        h, w = x.shape[-2:]
        i0 = torch.clamp(torch.arange(h, device=x.device) - r, 0, h)
        i1 = torch.clamp(torch.arange(h, device=x.device) + r + 1, 0, h)
        j0 = torch.clamp(torch.arange(w, device=x.device) - r, 0, w)
        j1 = torch.clamp(torch.arange(w, device=x.device) + r + 1, 0, w)
        a = s[:, :, i1][:, :, :, j1]
        b = s[:, :, i0][:, :, :, j1]
        c = s[:, :, i1][:, :, :, j0]
        d = s[:, :, i0][:, :, :, j0]
        return a - b - c + d


class GuidedFilter(nn.Module):
    def __init__(self, r=4, eps=1e-3, fp32=False):
        super().__init__()
        self.box = IntegralBoxFilter(r, fp32)
        self.eps = eps

    def forward(self, guide, src):
        n = self.box(torch.ones_like(guide))
        mean_i = self.box(guide) / n
        mean_p = self.box(src) / n
        cov_ip = self.box(guide * src) / n - mean_i * mean_p
        var_i = self.box(guide * guide) / n - mean_i * mean_i
        a = cov_ip / (var_i + self.eps)
        b = mean_p - a * mean_i
        return (self.box(a) / n) * guide + self.box(b) / n


class DepthGF(nn.Module):
    def __init__(self, fp32_box=False, max_depth=10.0):
        super().__init__()
        self.max_depth = max_depth
        self.enc = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=2, dilation=2), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=4, dilation=4), nn.ReLU(),
            nn.Conv2d(16, 1, 3, padding=1),
        )
        self.refine = GuidedFilter(r=4, eps=1e-3, fp32=fp32_box)

    def forward(self, rgb_lr, rgb_hr):
        d_lr = self.max_depth * torch.sigmoid(self.enc(rgb_lr))       # metres
        d_up = F.interpolate(d_lr, size=rgb_hr.shape[-2:], mode="bilinear", align_corners=False)
        guide = rgb_hr.mean(1, keepdim=True)
        return self.refine(guide, d_up)


def _scene(g, n, H=144):
    # piecewise-smooth depth: slanted floor plus a few fronto-parallel boxes; image shades by depth
    yy, xx = torch.meshgrid(torch.linspace(0, 1, H), torch.linspace(0, 1, H), indexing="ij")
    depths, imgs = [], []
    for _ in range(n):
        d = 2.0 + 5.0 * (1 - yy) * torch.rand(1, generator=g) + 1.0
        albedo = torch.full((3, H, H), 0.5) + 0.2 * torch.rand(3, 1, 1, generator=g)
        for _ in range(3):
            cx, cy = torch.rand(2, generator=g) * 0.7
            w = 0.15 + 0.2 * torch.rand(1, generator=g)
            m = (xx > cx) & (xx < cx + w) & (yy > cy) & (yy < cy + w)
            dz = 1.0 + 2.0 * torch.rand(1, generator=g)
            d = torch.where(m, dz.expand_as(d), d)
            albedo = torch.where(m[None], torch.rand(3, 1, 1, generator=g).expand(3, H, H), albedo)
        img = albedo * (1.5 / d.sqrt())[None]
        img = (img + 0.02 * torch.randn(3, H, H, generator=g)).clamp(0, 1)
        depths.append(d[None]); imgs.append(img)
    hr = torch.stack(imgs)
    lr = F.avg_pool2d(hr, 4)
    return (lr, hr), torch.stack(depths)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DepthGF(fp32_box=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    pool = [_scene(g, 4) for _ in range(10)]
    steps = 60
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(pred, gt):
        return F.l1_loss(pred.float(), gt)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
