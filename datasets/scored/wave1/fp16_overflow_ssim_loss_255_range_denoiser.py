"""DnCNN-style residual image denoiser (plain 3x3 conv + ReLU stack predicting the noise, output =
input - noise) working, like the EDSR/RCAN family of restoration code bases, on images in the
0-255 range, trained with an SSIM loss (1 - SSIM, Gaussian 7x7 window, data_range = 255, C1 =
(0.01*255)^2, C2 = (0.03*255)^2) under fp16 autocast without a GradScaler. The Gaussian window
filtering is a conv2d, so under autocast mu_x, mu_y, E[x^2], E[xy] come out in float16 and all the
SSIM algebra runs in float16. With 0-255 intensities E[x^2] ~ 1e4, 2*mu_x*mu_y ~ 1e4 and the
products (2 mu_x mu_y + C1)(2 sigma_xy + C2) and (mu_x^2 + mu_y^2 + C1)(sigma_x^2 + sigma_y^2 +
C2) are ~1e7 or more, far beyond 65504: they become inf, inf/inf is NaN, and the loss and every
gradient are NaN from the first step. The same run in fp32 trains fine. The fixed run evaluates
the SSIM in float32 (autocast disabled for the loss, inputs cast to float); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ('SSIM losses (pytorch-msssim / kornia style, data_range=255) evaluated under mixed precision; '
          "Zhang et al. 2017 DnCNN; Zhao et al. 2017 'Loss Functions for Image Restoration with Neural "
          "Networks'")


class DnCNN(nn.Module):
    def __init__(self, depth=5, ch=12):
        super().__init__()
        layers = [nn.Conv2d(1, ch, 3, padding=1), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()]
        layers += [nn.Conv2d(ch, 1, 3, padding=1)]
        self.body = nn.Sequential(*layers)

    def forward(self, noisy):
        return noisy - self.body(noisy)


def _gauss_window(size=7, sigma=1.5):
    x = torch.arange(size).float() - size // 2
    w = torch.exp(-x ** 2 / (2 * sigma ** 2))
    w = w / w.sum()
    return (w[:, None] * w[None, :])[None, None]


def ssim(x, y, data_range=255.0):
    w = _gauss_window().to(x.dtype)
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    mu_x, mu_y = F.conv2d(x, w), F.conv2d(y, w)
    sxx = F.conv2d(x * x, w) - mu_x * mu_x
    syy = F.conv2d(y * y, w) - mu_y * mu_y
    sxy = F.conv2d(x * y, w) - mu_x * mu_y
    num = (2 * mu_x * mu_y + c1) * (2 * sxy + c2)
    den = (mu_x * mu_x + mu_y * mu_y + c1) * (sxx + syy + c2)
    return (num / den).mean()


def make_loss(fp32_ssim):
    def loss_fn(pred, clean):
        if fp32_ssim:
            with torch.autocast("cpu", enabled=False):
                return 1.0 - ssim(pred.float(), clean.float())
        return 1.0 - ssim(pred, clean)
    return loss_fn


def _make_batch(g, n, s=20):
    ii = torch.arange(s).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    clean = torch.zeros(n, 1, s, s)
    for i in range(n):
        f = torch.rand(4, generator=g) * 0.5 + 0.1
        ph = torch.rand(4, generator=g) * 6.28
        img = 128 + 50 * torch.sin(f[0] * xx + ph[0]) * torch.cos(f[1] * yy + ph[1]) \
            + 40 * torch.sin(f[2] * (xx + yy) + ph[2])
        clean[i, 0] = img.clamp(0, 255)
    noisy = (clean + 25.0 * torch.randn(clean.shape, generator=g)).clamp(0, 255)
    return noisy, clean


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 8) for _ in range(10)]
    model = DnCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps = 60
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=make_loss(fp32_ssim=fixed), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
