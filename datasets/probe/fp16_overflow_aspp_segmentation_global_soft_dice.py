"""DeepLab-style ASPP segmenter trained with a batch-global soft-Dice loss under fp16 autocast.

Mechanism
---------
A small DeepLab-v3-like network (strided stem, atrous spatial pyramid pooling with
dilated branches and an image-pooling branch, 1x1 classifier, bilinear upsampling
back to full resolution) segments a dominant foreground class (think tissue vs.
background on histology tiles, ~65-75 % of pixels are foreground).  It is trained with
mixed precision (torch.autocast, float16) and a GradScaler, i.e. the textbook AMP recipe.

The loss is the widely copied "flatten everything" soft Dice:
    p = sigmoid(logits).view(-1); t = target.view(-1)
    dice = (2 * (p * t).sum() + 1) / (p.sum() + t.sum() + 1)
Under autocast the classifier conv returns float16 logits, so `sigmoid` and the three
`.sum()` reductions also produce float16 results.  The reductions accumulate internally
in fp32 but the *result* is cast back to fp16, whose max is 65504.  The batch holds
roughly 50k pixels: at initialisation p ~ 0.5 everywhere and the denominator
p.sum() + t.sum() sits just below 65504, so the first steps train normally.  As the net
learns, p rises towards 1 on the (majority) foreground, so p.sum() grows.  Around step
10-15 the denominator p.sum() + t.sum() crosses 65504 and becomes +inf.  From then
on dice = finite / inf = 0, the loss is exactly 1.0 and every gradient is exactly 0
(d/dI = 2/inf = 0, d/dD = -num/inf^2 = 0).  The GradScaler does not react: the
gradients are finite zeros, so no step is skipped and the scale stays put.  Adam's
momentum keeps pushing in the last direction (raising p further), so a few steps later
the numerator 2 * (p * t).sum() overflows too and the loss is inf/inf = NaN.  Now the
scaler sees non-finite gradients, skips steps and keeps halving its scale.  That cannot
help, because the overflow happens in the forward reduction, not in the scaled backward,
and the run keeps returning NaN (or 1.0).  The fp32 run at the same point has a
healthy loss of ~0.2 and keeps improving.

ORIGIN = "classifier": the 1x1 classifier conv is the op whose float16 output feeds
the overflowing loss reductions; everything upstream is numerically healthy.  (The
overflow itself happens inside the loss, which is not a module.)

Seed variation: image size / batch size (so the pixel count and onset step vary),
foreground fraction, channel width, dilation rates, learning rate.

Fix: compute the loss in fp32 -- `sigmoid(logits.float())` -- leaving autocast, the
scaler, model, data and optimiser unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "classifier"
SOURCE = ("Batch-flattened soft-Dice snippet (Kaggle 'Loss Function Library - Keras & PyTorch' DiceLoss) "
          "used with torch.cuda.amp; PyTorch forum/GitHub reports of Dice loss stuck at 1.0 / NaN only with AMP "
          "because fp16 reductions over >65504 overflow")


class ASPP(nn.Module):
    def __init__(self, c, rates):
        super().__init__()
        self.b0 = nn.Sequential(nn.Conv2d(c, c, 1), nn.ReLU())
        self.b1 = nn.Sequential(nn.Conv2d(c, c, 3, padding=rates[0], dilation=rates[0]), nn.ReLU())
        self.b2 = nn.Sequential(nn.Conv2d(c, c, 3, padding=rates[1], dilation=rates[1]), nn.ReLU())
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1), nn.ReLU())
        self.project = nn.Sequential(nn.Conv2d(4 * c, c, 1), nn.ReLU())

    def forward(self, x):
        h, w = x.shape[-2:]
        g = self.pool(x).expand(-1, -1, h, w)
        return self.project(torch.cat([self.b0(x), self.b1(x), self.b2(x), g], 1))


class DeepLabLite(nn.Module):
    def __init__(self, c, rates):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.aspp = ASPP(c, rates)
        self.classifier = nn.Conv2d(c, 1, 1)
        nn.init.zeros_(self.classifier.bias)
        with torch.no_grad():
            self.classifier.weight.mul_(0.1)

    def forward(self, x):
        h, w = x.shape[-2:]
        y = self.classifier(self.aspp(self.stem(x)))
        return F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False)


def _make_batch(g, b, s, fg_frac):
    yy, xx = torch.meshgrid(torch.arange(s, dtype=torch.float32), torch.arange(s, dtype=torch.float32),
                            indexing="ij")
    masks = []
    for _ in range(b):
        # background = a few elliptical holes in an otherwise foreground tile
        m = torch.ones(s, s)
        target_bg = 1.0 - fg_frac
        tries = 0
        while (1 - m.mean()) < target_bg and tries < 40:
            cy, cx = torch.rand(2, generator=g) * s
            ry, rx = (0.08 + 0.18 * torch.rand(2, generator=g)) * s
            m[((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1] = 0.0
            tries += 1
        masks.append(m)
    t = torch.stack(masks).unsqueeze(1)
    fg_col = torch.tensor([0.8, 0.3, 0.6]).view(1, 3, 1, 1)
    bg_col = torch.tensor([0.9, 0.85, 0.9]).view(1, 3, 1, 1)
    img = t * fg_col + (1 - t) * bg_col
    img = img + 0.25 * torch.randn(img.shape, generator=g)
    img = (img - 0.7) / 0.3
    return img, t


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    # (batch, side): pixel counts of ~47k-53k
    b, s = [(5, 100), (3, 128), (4, 112), (6, 92), (5, 102), (3, 130)][seed % 6]
    fg_frac = 0.70 + 0.02 * (seed % 3)
    c = [10, 12, 14][seed % 3]
    rates = [(2, 4), (3, 6), (2, 5)][(seed // 2) % 3]
    lr = [3e-3, 4e-3, 5e-3][(seed + 1) % 3]
    steps = 60

    model = DeepLabLite(c, rates)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_make_batch(g, b, s, fg_frac) for _ in range(steps)]

    def loss_fn(logits, target):
        if fixed:
            logits = logits.float()  # the fix: reduce in fp32
        p = torch.sigmoid(logits).reshape(-1)
        t = target.reshape(-1).to(p.dtype)
        inter = (p * t).sum()
        dice = (2 * inter + 1.0) / (p.sum() + t.sum() + 1.0)
        return 1.0 - dice

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
