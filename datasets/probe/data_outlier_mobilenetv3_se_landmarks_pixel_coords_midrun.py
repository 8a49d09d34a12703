"""MobileNetV3-style landmark regressor (inverted residuals, hard-swish, squeeze-excitation
with hard-sigmoid gates, BatchNorm) predicting two landmarks as normalised [0,1] coordinates,
trained with SGD+momentum on MSE. At one step mid-run a batch from a second annotation shard
arrives in which four samples' landmarks were exported in absolute pixels of the 1024-px
originals (values up to ~870). That batch gives a loss ~1e6 times normal; the momentum
step throws the head weights far out, the next outputs and gradients explode and the run
goes to inf/NaN a few steps later.
fixed=True: the corrupt samples (coordinates outside [0,1]) are filtered out of that batch.
"""

import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "Known pattern: a mixed-source landmark/keypoint dataset where one annotation shard stores "
    "absolute pixel coordinates instead of normalised ones, so one batch mid-run carries "
    "targets ~1000x too large and the loss goes NaN a few steps later; "
    "MobileNetV3 (Howard et al. 2019)"
)


class SqueezeExcite(nn.Module):
    def __init__(self, ch, rd):
        super().__init__()
        self.fc1 = nn.Conv2d(ch, rd, 1)
        self.act = nn.ReLU()
        self.fc2 = nn.Conv2d(rd, ch, 1)
        self.gate = nn.Hardsigmoid()

    def forward(self, x):
        s = self.fc2(self.act(self.fc1(x.mean((2, 3), keepdim=True))))
        return x * self.gate(s)


class InvertedResidual(nn.Module):
    def __init__(self, cin, mid, cout, k, stride, se):
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        self.conv_pw = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.Hardswish()
        )
        self.conv_dw = nn.Sequential(
            nn.Conv2d(mid, mid, k, stride, k // 2, groups=mid, bias=False),
            nn.BatchNorm2d(mid),
            nn.Hardswish(),
        )
        self.se = SqueezeExcite(mid, max(8, mid // 4)) if se else nn.Identity()
        self.conv_pwl = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.conv_pwl(self.se(self.conv_dw(self.conv_pw(x))))
        return x + y if self.use_res else y


class MobileNetV3Landmarks(nn.Module):
    def __init__(self, n_out=4):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish()
        )
        self.blocks = nn.Sequential(
            InvertedResidual(16, 48, 24, 3, 2, False),
            InvertedResidual(24, 72, 24, 3, 1, False),
            InvertedResidual(24, 96, 40, 5, 2, True),
            InvertedResidual(40, 120, 40, 5, 1, True),
        )
        self.conv_head = nn.Sequential(nn.Conv2d(40, 128, 1), nn.Hardswish())
        self.classifier = nn.Linear(128, n_out)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.classifier(self.conv_head(x.mean((2, 3), keepdim=True)).flatten(1))


def _make_batch(g, bs, img=32, sigma=2.0):
    yy, xx = torch.meshgrid(torch.arange(img).float(), torch.arange(img).float(), indexing="ij")
    pos = 0.15 + 0.7 * torch.rand(bs, 2, 2, generator=g)  # normalised (y, x) for 2 landmarks
    pix = pos * (img - 1)
    d2 = (yy - pix[..., 0, None, None]) ** 2 + (xx - pix[..., 1, None, None]) ** 2
    blobs = torch.exp(-d2 / (2 * sigma**2))  # bs, 2, H, W
    colour = torch.tensor([[1.0, 0.2, -0.5], [-0.6, 0.9, 0.4]])  # each landmark its own colour
    x = torch.einsum("bkhw,kc->bchw", blobs, colour) * 2.0 + 0.3 * torch.randn(
        bs, 3, img, img, generator=g
    )
    return x, pos.flatten(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    model = MobileNetV3Landmarks()
    steps = 200
    bad_step = 90 + 10 * (seed % 4)
    batches = []
    for i in range(steps):
        x, y = _make_batch(g, 32)
        if i == bad_step:
            # shard exported by another tool: absolute pixel coords of the 1024-px source images
            n_bad = 4
            y = y.clone()
            y[:n_bad] = y[:n_bad] * 1024.0
            if fixed:
                keep = ((y >= 0) & (y <= 1)).all(dim=1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=4e-5)
    return dict(
        model=model,
        optimizer=opt,
        loss_fn=nn.MSELoss(),
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
