"""EDSR-style residual super-resolution network (residual blocks with res_scale 0.1, pixel-shuffle
upsampler) trained in the EDSR convention: pixels in the 0-255 range (mean-shifted inside the
model) and an L1 loss *summed* over pixels and batch instead of averaged. The loss values are in
the 3e4-2e5 range from step 0 and the raw gradient norms are in the thousands, which looks like an
exploding or unscaled run, and the loss also jumps between batches of very different contrast.
With Adam, whose update is invariant to the scale of the loss, this is harmless: the summed L1 is
just the mean L1 times a constant, the network converges and the loss falls steadily. Healthy."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "EDSR (Lim et al. 2017) 0-255 range with MeanShift and res_scale=0.1; Adam's invariance to a constant rescaling of the loss (Kingma & Ba 2015)"


class ResBlock(nn.Module):
    def __init__(self, ch, res_scale=0.1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1))
        self.res_scale = res_scale

    def forward(self, x):
        return x + self.res_scale * self.body(x)


class EDSRLite(nn.Module):
    def __init__(self, ch, n_blocks, scale):
        super().__init__()
        self.register_buffer("rgb_mean", torch.tensor([114.4, 111.5, 103.0]).view(1, 3, 1, 1))
        self.head = nn.Conv2d(3, ch, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(ch) for _ in range(n_blocks)], nn.Conv2d(ch, ch, 3, padding=1))
        self.upsample = nn.Sequential(nn.Conv2d(ch, ch * scale * scale, 3, padding=1), nn.PixelShuffle(scale))
        self.tail = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, lr):                      # lr in [0, 255]
        x = self.head(lr - self.rgb_mean)
        x = x + self.body(x)
        return self.tail(self.upsample(x)) + self.rgb_mean


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(19000 + seed)
    ch = [16, 12, 16][seed % 3]
    n_blocks = [2, 3, 4][seed % 3]
    scale = 2
    bs = [8, 6, 8][seed % 3]
    steps = [80, 100, 70][seed % 3]
    S = 16
    def make(n):
        base = torch.rand(n, 3, S // 4, S // 4, generator=g)
        contrast = 60 + 160 * torch.rand(n, 1, 1, 1, generator=g)
        hr = (F.interpolate(base, size=(S, S), mode="bicubic", align_corners=False) - 0.5) * contrast + 120
        hr = hr.clamp(0, 255)
        return F.avg_pool2d(hr, scale), hr
    pool = [make(bs) for _ in range(20)]
    batches = [pool[i % 20] for i in range(steps)]
    model = EDSRLite(ch, n_blocks, scale)
    opt = torch.optim.Adam(model.parameters(), lr=[2e-3, 1e-3, 1e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.l1_loss(o, y, reduction="sum"),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
