"""ENet (Paszke et al. 2016) real-time semantic segmentation -- initial block (3x3 stride-2
conv concatenated with a max-pool), bottleneck stages with PReLU, asymmetric and dilated
convs, max-pool downsampling and transposed-conv upsampling, and a final full-resolution
``fullconv`` ConvTranspose2d -- trained on aerial/road-scene crops with Adam under float16
autocast and no GradScaler. The loss is pixel cross-entropy with ``reduction='sum'`` (copied
from the ``cross_entropy2d(size_average=False)`` helper of the FCN ports).

Mechanism: autocast runs the convs -- including their backward -- in float16. With a summed
loss, dL/dlogit is O(1) at every pixel, and the gradient of the final transposed conv's
bias is the SUM of (p - y) over batch x H x W pixels: ~0.6 x 8 x 128 x 128 ~ 7e4-9e4, which is
past the float16 maximum of 65504. The fp16 backward of ``fullconv`` therefore returns inf
for its bias/weight gradients (and inf flows into the decoder); Adam turns them into NaN
weights at the very first step and the loss is NaN from step 1 on. In bfloat16 (fp32
exponent range) the same gradient is merely large and Adam ignores its scale.

ORIGIN: ``fullconv`` -- the output transposed conv, whose fp16 gradient is the first value
past 65504.

Fix: bfloat16 autocast instead of float16 (same model, loss, optimizer and data).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "fullconv"
SOURCE = ('ENet (Paszke et al. 2016); known AMP pattern: summed (size_average=False / '
          "reduction='sum') pixel losses trained in float16 without GradScaler overflow in "
          'the fp16 backward and give NaN after the first step; fixed by bf16')


class InitialBlock(nn.Module):
    def __init__(self, c_out):
        super().__init__()
        self.conv = nn.Conv2d(3, c_out - 3, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.act = nn.PReLU(c_out)

    def forward(self, x):
        return self.act(self.bn(torch.cat([self.conv(x), F.max_pool2d(x, 2)], 1)))


class Bottleneck(nn.Module):
    def __init__(self, c, dilation=1, asymmetric=False):
        super().__init__()
        mid = c // 4
        if asymmetric:
            body = [nn.Conv2d(mid, mid, (5, 1), padding=(2, 0), bias=False),
                    nn.Conv2d(mid, mid, (1, 5), padding=(0, 2), bias=False)]
        else:
            body = [nn.Conv2d(mid, mid, 3, padding=dilation, dilation=dilation, bias=False)]
        self.block = nn.Sequential(
            nn.Conv2d(c, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.PReLU(mid),
            *body, nn.BatchNorm2d(mid), nn.PReLU(mid),
            nn.Conv2d(mid, c, 1, bias=False), nn.BatchNorm2d(c), nn.Dropout2d(0.01))
        self.act = nn.PReLU(c)

    def forward(self, x):
        return self.act(x + self.block(x))


class Downsample(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c_in, c_out, 2, stride=2, bias=False), nn.BatchNorm2d(c_out))
        self.c_pad = c_out - c_in
        self.act = nn.PReLU(c_out)

    def forward(self, x):
        main = F.max_pool2d(x, 2)
        main = F.pad(main, (0, 0, 0, 0, 0, self.c_pad))
        return self.act(main + self.conv(x))


class Upsample(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.up = nn.Sequential(nn.ConvTranspose2d(c_in, c_out, 2, stride=2, bias=False), nn.BatchNorm2d(c_out))
        self.act = nn.PReLU(c_out)

    def forward(self, x):
        return self.act(self.up(x))


class ENet(nn.Module):
    def __init__(self, n_classes, w, n_mid):
        super().__init__()
        self.initial = InitialBlock(w)
        self.down1 = Downsample(w, 4 * w)
        self.stage1 = nn.Sequential(*[Bottleneck(4 * w) for _ in range(2)])
        self.down2 = Downsample(4 * w, 8 * w)
        self.stage2 = nn.Sequential(*[Bottleneck(8 * w, dilation=2 ** (i % 3 + 1) if i % 2 else 1,
                                                 asymmetric=(i % 4 == 3)) for i in range(n_mid)])
        self.up1 = Upsample(8 * w, 4 * w)
        self.stage4 = Bottleneck(4 * w)
        self.up2 = Upsample(4 * w, w)
        self.stage5 = Bottleneck(w)
        self.fullconv = nn.ConvTranspose2d(w, n_classes, 2, stride=2)

    def forward(self, x):
        x = self.stage1(self.down1(self.initial(x)))
        x = self.stage2(self.down2(x))
        x = self.stage4(self.up1(x))
        x = self.stage5(self.up2(x))
        return self.fullconv(x)


def make_batch(g, bs, size, n_classes):
    """Road (grey band), vegetation (green blobs), buildings (bright rectangles), other."""
    x = 0.2 + 0.05 * torch.randn(bs, 3, size, size, generator=g)
    y = torch.zeros(bs, size, size, dtype=torch.long)
    for i in range(bs):
        r = int(torch.randint(size // 4, 3 * size // 4, (1,), generator=g))
        wd = int(torch.randint(size // 10, size // 5, (1,), generator=g))
        y[i, r:r + wd, :] = 1
        x[i, :, r:r + wd, :] = torch.tensor([0.5, 0.5, 0.5]).view(3, 1, 1)
        for _ in range(3):
            k = int(torch.randint(2, n_classes, (1,), generator=g))
            s = int(torch.randint(size // 8, size // 4, (1,), generator=g))
            r0 = int(torch.randint(0, size - s, (1,), generator=g))
            c0 = int(torch.randint(0, size - s, (1,), generator=g))
            y[i, r0:r0 + s, c0:c0 + s] = k
            col = [0.1, 0.6, 0.2] if k == 2 else [0.9, 0.85, 0.8]
            x[i, :, r0:r0 + s, c0:c0 + s] = torch.tensor(col).view(3, 1, 1)
    x = x + 0.05 * torch.randn(bs, 3, size, size, generator=g)
    return (x - 0.4) / 0.25, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(w=8, n_mid=4, lr=2e-3, bs=8, size=128, steps=50),
        dict(w=12, n_mid=3, lr=5e-4, bs=6, size=160, steps=50),
        dict(w=8, n_mid=6, lr=2e-3, bs=12, size=112, steps=40),
    ][seed % 3]
    torch.manual_seed(seed)
    n_classes = 4
    model = ENet(n_classes, cfg["w"], cfg["n_mid"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"], weight_decay=2e-4)
    g = torch.Generator().manual_seed(31 + seed)
    batches = [make_batch(g, cfg["bs"], cfg["size"], n_classes) for _ in range(cfg["steps"])]
    loss_fn = nn.CrossEntropyLoss(reduction="sum")     # cross_entropy2d(size_average=False)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
