"""ESPCN sub-pixel super-resolution network (conv -> conv -> conv -> PixelShuffle, ReLU as in most
re-implementations) trained with MSE and Adam. The config string "5e-4" was edited to "5e-1"
(and similar 3e-1/4e-1 values in the sweep): with Adam every parameter moves by ~lr per step
regardless of the gradient size, i.e. update/weight ratios of ~1-10 for 3x3 conv weights of
magnitude ~0.05-0.1. The first steps overshoot, the output scale blows up (predicted pixels far
outside [0, 1]) and the loss climbs 10-20x above its initial value and stays there, oscillating,
without becoming NaN. Fixed: lr 1e-3, nothing else."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "ESPCN (Shi et al. 2016) sub-pixel conv SR; common forum reports of SR/denoising nets whose loss rises and never recovers with Adam lr in the 1e-1 range (Karpathy's 3e-4 rule of thumb)"


class ESPCN(nn.Module):
    def __init__(self, width, scale):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, width, 5, padding=2), nn.ReLU(),
                                  nn.Conv2d(width, width // 2, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(width // 2, scale * scale, 3, padding=1))
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, lr_img):
        return self.shuffle(self.body(lr_img))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(14000 + seed)
    width = [32, 24, 40][seed % 3]
    scale = [2, 3, 2][seed % 3]
    bs = [16, 12, 20][seed % 3]
    steps = [60, 80, 70][seed % 3]
    bad_lr = [0.5, 0.3, 0.4][seed % 3]
    S = 18 if scale == 3 else 16
    def make(n):
        base = torch.rand(n, 1, S // 3, S // 3, generator=g)
        hr = F.interpolate(base, size=(S, S), mode="bicubic", align_corners=False).clamp(0, 1)
        return F.avg_pool2d(hr, scale), hr
    pool = [make(bs) for _ in range(20)]
    batches = [pool[i % 20] for i in range(steps)]
    model = ESPCN(width, scale)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else bad_lr)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.mse_loss(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
