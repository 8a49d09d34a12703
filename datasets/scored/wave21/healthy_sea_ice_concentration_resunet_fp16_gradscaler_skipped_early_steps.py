"""Healthy: residual conv encoder-decoder for daily sea-ice concentration (IceNet-like) under fp16 autocast with GradScaler.

What looks alarming: GradScaler starts at its default scale 65536; the first backward passes overflow
in fp16 (inf gradients), so the scaler skips several optimizer steps in a row and halves the scale
each time; the loss is flat for those first steps. Also, large areas of open ocean and solid pack
ice make many output logits large in magnitude. None of this is a failure: once the scale has
backed off, steps are taken normally and the BCE loss decreases steadily.

ORIGIN: None (healthy run).  Fix: none needed.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "IceNet (Andersson et al. 2021) sea-ice forecasting U-Net; torch.amp GradScaler docs: skipped steps while the scale is calibrated"


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c))

    def forward(self, x):
        return torch.relu(x + self.body(x))


class IceResUNet(nn.Module):
    def __init__(self, cin, c):
        super().__init__()
        self.stem = nn.Conv2d(cin, c, 3, padding=1)
        self.enc = ResBlock(c)
        self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        self.mid = ResBlock(2 * c)
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec = ResBlock(c)
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        e = self.enc(self.stem(x))
        m = self.mid(self.down(e))
        return self.out(self.dec(self.up(m) + e)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 12, 20][seed % 3]
    H = [16, 24, 16][seed % 3]
    bs = [8, 6, 8][seed % 3]
    steps = [60, 50, 70][seed % 3]
    lr = [1e-3, 1.5e-3, 1e-3][seed % 3]
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, H), torch.linspace(-1, 1, H), indexing="ij")
    r = torch.sqrt(xx ** 2 + yy ** 2)
    batches = []
    for _ in range(steps):
        edge = 0.5 + 0.2 * torch.rand(bs, 1, 1, generator=g)
        sic = torch.sigmoid((edge - r) * 12 + 0.5 * torch.randn(bs, H, H, generator=g))  # concentration 0..1
        sst = -sic * 2 + 0.3 * torch.randn(bs, H, H, generator=g)
        t2m = -sic * 1.5 + 0.3 * torch.randn(bs, H, H, generator=g)
        prev = (sic + 0.1 * torch.randn(bs, H, H, generator=g)).clamp(0, 1)
        x = torch.stack([prev, sst, t2m], 1)
        y = torch.sigmoid((edge - r) * 12 + 0.3)  # next-day concentration (edge advances)
        batches.append((x, y))
    model = IceResUNet(3, c)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)

    def loss_fn(out, target):
        # summed over pixels, averaged over the batch (IceNet-style per-map loss): ~H*W times larger than
        # a pixel mean, so the scaled fp16 backward overflows at first and the scaler backs off
        return nn.functional.binary_cross_entropy_with_logits(out.float(), target, reduction="sum") / out.shape[0]

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
