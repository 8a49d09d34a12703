"""Residual super-resolution network (bicubic-upsampled input + a small conv residual branch) trained
by directly maximising PSNR: the loss is -PSNR = 10*log10(MSE) (for images in [0,1]), minimised with
Adam. It looks alarming: the loss is negative from the first step and keeps going *down* towards -30
or -40 dB with no floor at zero, its per-step changes are in dB (a late drop of 0.5 looks tiny next to
the early drops), and the gradient of log(MSE) grows as the MSE shrinks (scale 1/MSE). All of that is
normal for a log-domain loss: the reconstruction improves steadily. Healthy."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "PSNR-oriented SR training with a -PSNR / log-MSE objective (e.g. 'PSNR loss' options in BasicSR-style codebases)"

class ResidualSR(nn.Module):
    def __init__(self, c, depth):
        super().__init__()
        layers = [nn.Conv2d(3, c, 3, padding=1), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(c, c, 3, padding=1), nn.ReLU()]
        layers += [nn.Conv2d(c, 3, 3, padding=1)]
        self.branch = nn.Sequential(*layers)
    def forward(self, lr_img):
        up = F.interpolate(lr_img, scale_factor=2, mode="bilinear", align_corners=False)
        return up + self.branch(up)

def neg_psnr(out, hr):
    mse = ((out - hr) ** 2).mean()
    return 10.0 * torch.log10(mse)

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(13000 + seed)
    cfg = [dict(c=16, depth=3, bs=8, p=24, lr=1e-3, steps=100),
           dict(c=12, depth=4, bs=6, p=20, lr=2e-3, steps=80),
           dict(c=20, depth=3, bs=10, p=16, lr=1e-3, steps=120)][seed % 3]
    def batch():
        base = torch.rand(cfg["bs"], 3, cfg["p"] // 4, cfg["p"] // 4, generator=g)
        hr = F.interpolate(base, size=(cfg["p"], cfg["p"]), mode="bicubic", align_corners=False).clamp(0, 1)
        stripes = (torch.arange(cfg["p"]) % 4 < 2).float().view(1, 1, 1, -1)
        hr = (0.85 * hr + 0.15 * stripes).clamp(0, 1)
        return F.avg_pool2d(hr, 2), hr
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    model = ResidualSR(cfg["c"], cfg["depth"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=neg_psnr, batches=batches, steps=cfg["steps"],
                amp_dtype=None, scaler=None)
