"""Small U-Net for monocular depth regression (metres), MSE loss, Adam.

Mechanism: depth maps come from a Kinect-style sensor where invalid pixels are stored as 65535
(raw uint16 millimetres). The loader converts to metres and masks invalids for every shard but
one; in that one batch ~90% of the target pixels (sensor dropout frames) are 65535. The data is finite, so nothing
turns NaN: the batch produces a gradient ~1e4x the usual one, Adam's second-moment estimate
(beta2=0.999) absorbs it and stays huge for the rest of the run, so all later normalised updates
are ~1e-4 of normal size. The model is frozen where the outlier step left it (worse than at start)
and the loss never gets back below its starting level: a stall, no NaN.
ORIGIN: None (the corrupt batch, not a module).
Fix: that batch with the invalid pixels masked/converted like every other batch.
"""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "NYU-Depth v2 / Kinect raw depth with 65535 (0xFFFF) invalid-pixel sentinel; issues about depth nets stalling after one bad shard with Adam"


class UNetSmall(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.Conv2d(w, w, 3, padding=1), nn.ReLU())
        self.enc2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(2 * w, w, 3, padding=1), nn.ReLU(), nn.Conv2d(w, 1, 1))

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        return self.dec(torch.cat([self.up(e2), e1], 1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, bs, lr, steps, bad = [(16, 6, 3e-3, 90, 5), (16, 6, 3e-3, 100, 5), (8, 10, 3e-3, 70, 2)][seed % 3]
    S = 16
    model = UNetSmall(w)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    kern = torch.ones(1, 1, 5, 5) / 25
    batches = []
    for i in range(steps):
        x = torch.randn(bs, 3, S, S, generator=g)
        depth = 2.5 + F.conv2d(x[:, :1] + 0.5 * x[:, 1:2], kern, padding=2) * 3.0  # metres
        if i == bad and not fixed:
            inv = torch.rand(bs, 1, S, S, generator=g) < 0.9
            depth = torch.where(inv, torch.full_like(depth, 65535.0), depth)
        batches.append((x, depth))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
