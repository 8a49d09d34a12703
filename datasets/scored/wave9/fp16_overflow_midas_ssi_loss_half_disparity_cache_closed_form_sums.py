"""Relative-depth (MiDaS-style) training with the scale-and-shift-invariant loss under fp16
autocast and no GradScaler.  Ground-truth stereo disparities (in pixels, 20-120 px) are cached as
float16 arrays to save memory, and the loss follows MiDaS' ``compute_scale_and_shift``: per-image
closed-form least squares built from sums over all valid pixels (a_00 = sum p^2, a_01 = sum p,
a_11 = sum m, b_0 = sum p*g, b_1 = sum g).  With half-precision prediction and target these sums are
reduced in fp16: b_1 = sum g over a 32x32 disparity map is ~75 px x 1024 px = 7.7e4 > 65504, so it
overflows to inf, the solved shift becomes inf/NaN and the loss is NaN on the first batch.  The fix
runs this op in fp32 (cast prediction and target to float inside the loss); the network itself
still runs under fp16 autocast."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "head"
SOURCE = ("Ranftl et al. 2020 MiDaS ScaleAndShiftInvariantLoss / compute_scale_and_shift (sums over "
          "pixels); fp16 reductions overflowing past 65504; PyTorch AMP docs on ops to keep in fp32")


class RelDepthNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.Conv2d(2 * c, 2 * c, 3, padding=1), nn.ReLU())
        self.dec = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                                 nn.Conv2d(2 * c, c, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(c, 1, 3, padding=1)

    def forward(self, img):
        return self.head(self.dec(self.enc(img))).squeeze(1)      # relative inverse depth


def _stereo(g, n, s=32):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    imgs, disps = [], []
    for _ in range(n):
        base = 50 + 40 * torch.rand((), generator=g)
        slope = (torch.rand(2, generator=g) - 0.5) * 1.5
        disp = base + slope[0] * (xs - s / 2) + slope[1] * (ys - s / 2)
        c = 8 + 16 * torch.rand(2, generator=g); r = 4 + 4 * torch.rand((), generator=g)
        obj = (((xs - c[0]) ** 2 + (ys - c[1]) ** 2).sqrt() < r)
        disp = torch.where(obj, disp + 30, disp).clamp(20, 120)
        img = torch.stack([disp / 120, (xs / s) * 0.2 + 0.5 * obj.float(), 1 - disp / 120])
        img = img + 0.05 * torch.randn(3, s, s, generator=g)
        imgs.append(img); disps.append(disp)
    return torch.stack(imgs), torch.stack(disps).half()          # disparity cache stored as float16


def ssi_loss(pred, gt, fp32):
    if fp32:
        pred, gt = pred.float(), gt.float()
    mask = (gt > 0).to(pred.dtype)
    a00 = (mask * pred * pred).sum((1, 2)); a01 = (mask * pred).sum((1, 2)); a11 = mask.sum((1, 2))
    b0 = (mask * pred * gt).sum((1, 2)); b1 = (mask * gt).sum((1, 2))
    det = (a00 * a11 - a01 * a01).clamp_min(1e-6)
    scale = (a11 * b0 - a01 * b1) / det
    shift = (-a01 * b0 + a00 * b1) / det
    aligned = scale[:, None, None] * pred + shift[:, None, None]
    res = mask * (aligned - gt).abs()
    return (res.sum((1, 2)) / a11).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RelDepthNet()
    pool = [_stereo(g, 4) for _ in range(10)]
    steps = 60
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(pred, gt):
        return ssi_loss(pred, gt, fp32=fixed)

    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
