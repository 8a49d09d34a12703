"""2D brain-MRI lesion segmentation with a small U-Net (Adam, BCE + soft-Dice).  The data pipeline
z-scores every slice on its own, ``(x - x.mean()) / x.std()``, as many BraTS 2D loaders do.  The
volumes are padded with empty (all-zero) slices above and below the skull, and one such slice made
it into the sampled slices: its std is exactly 0, so the normalised slice is 0/0 = NaN on every
pixel.  When that batch arrives (step 45) the first convolution turns the NaNs into NaN features,
the loss is NaN and the Adam update writes NaN into every weight, so the rest of the run is NaN.
The fix filters the corrupt row (the empty slice is sanitised to zeros, as after skipping
normalisation for empty slices)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "down1.0"
SOURCE = ("BraTS 2D slice loaders with per-slice z-score; 'nan loss after some iterations' reports "
          "traced to empty slices with zero standard deviation")


def block(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.ReLU(), nn.Conv2d(o, o, 3, padding=1), nn.ReLU())


class UNetSmall(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.down1 = block(1, c)
        self.down2 = block(c, 2 * c)
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec = block(2 * c, c)
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        u = self.up(d2)
        return self.out(self.dec(torch.cat([u, d1], 1))).squeeze(1)


def _slices(g, n, s=16):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    imgs, masks = [], []
    for _ in range(n):
        brain = (((xs - s / 2) / 6.5) ** 2 + ((ys - s / 2) / 7.0) ** 2 < 1).float()
        c = s / 2 + (torch.rand(2, generator=g) - 0.5) * 6
        r = 1.5 + 2 * torch.rand((), generator=g)
        lesion = (((xs - c[0]) ** 2 + (ys - c[1]) ** 2).sqrt() < r).float() * brain
        raw = brain * (300 + 40 * torch.randn(s, s, generator=g)) + 250 * lesion
        imgs.append(raw); masks.append(lesion)
    return torch.stack(imgs), torch.stack(masks)


def zscore(x):
    m = x.mean(dim=(1, 2), keepdim=True); sd = x.std(dim=(1, 2), keepdim=True)
    return ((x - m) / sd).unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = UNetSmall()
    raw = [_slices(g, 8) for _ in range(10)]
    steps = 100
    batches = []
    for i in range(steps):
        x, y = raw[i % len(raw)]
        if i == 45:                                   # an empty padding slice sampled into the batch
            x = x.clone(); y = y.clone(); x[3] = 0.0; y[3] = 0.0
            xn = zscore(x)
            if fixed:
                xn = torch.nan_to_num(xn, nan=0.0)
            batches.append((xn, y))
        else:
            batches.append((zscore(x), y))

    def loss_fn(logits, y):
        bce = F.binary_cross_entropy_with_logits(logits, y)
        p = torch.sigmoid(logits)
        dice = 1 - (2 * (p * y).sum() + 1) / (p.sum() + y.sum() + 1)
        return bce + dice

    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
