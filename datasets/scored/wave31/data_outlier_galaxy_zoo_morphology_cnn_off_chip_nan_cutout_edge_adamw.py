"""Galaxy-Zoo-style morphology classifier (smooth / spiral disk / edge-on / merger) on 3-band (gri)
32x32 cutouts; a small VGG-like 2-D CNN trained with AdamW and label-smoothed cross-entropy.

Mechanism: cutouts are made around catalogue positions from survey frames.  Sources that lie near
a CCD edge or chip gap get a cutout that runs off the frame, and the cutout tool (as
astropy.nddata.Cutout2D with mode='partial') fills the missing region with ``fill_value=nan``.  The
pipeline arcsinh-stretches and normalises per band, which leaves the NaNs in place.  All but one
shard of the training set comes from frame interiors; the one batch that samples the edge objects
carries NaN strips, the first convolution turns them into NaN feature maps, and the loss (and then
every weight, through AdamW) is NaN from that step on.  Which step that is depends on the shuffle
(the seed).

ORIGIN: ``features.0``, the first Conv2d, which is the first layer the corrupt batch reaches and
where the first non-finite activation appears.  The cause is in the data, not in that layer.

Fix: replace the off-chip NaN fill with the sky level (0 after background subtraction), i.e.
``torch.nan_to_num(img, nan=0.0)`` in the preprocessing, before the batches are formed; nothing
else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "features.0"
SOURCE = ("astropy Cutout2D(mode='partial', fill_value=np.nan) cutouts at chip edges feeding NaN into "
          "CNNs (astropy docs; Galaxy Zoo / DECaLS cutout pipelines); Dieleman et al. 2015 "
          "Galaxy Zoo CNN")

N_CLASSES = 4


def _galaxy(g, cls, n=32):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, n), torch.linspace(-1, 1, n), indexing="ij")
    ang = torch.rand(1, generator=g).item() * math.pi
    ca, sa = math.cos(ang), math.sin(ang)
    u, v = ca * xx + sa * yy, -sa * xx + ca * yy
    size = 0.25 + 0.15 * torch.rand(1, generator=g).item()
    if cls == 0:      # smooth elliptical: de Vaucouleurs-like, round-ish, red
        q = 0.7 + 0.3 * torch.rand(1, generator=g).item()
        r = torch.sqrt(u ** 2 + (v / q) ** 2) / size
        img = torch.exp(-7.67 * (r.clamp_min(1e-3) ** 0.25 - 1))
        col = torch.tensor([0.6, 1.0, 1.3])
    elif cls == 1:    # face-on spiral: exponential disk + two arms, blue
        r = torch.sqrt(u ** 2 + v ** 2) / size
        th = torch.atan2(v, u)
        arms = 1 + 0.8 * torch.cos(2 * th - 4 * torch.log(r + 0.1))
        img = torch.exp(-r) * arms + 2 * torch.exp(-(r / 0.2) ** 2)
        col = torch.tensor([1.2, 1.0, 0.8])
    elif cls == 2:    # edge-on disk: thin and elongated
        r = torch.sqrt(u ** 2 + (v / 0.12) ** 2) / size
        img = torch.exp(-r)
        col = torch.tensor([1.0, 1.0, 1.0])
    else:             # merger: two offset cores + tidal tail
        d = 0.3
        r1 = torch.sqrt((u - d) ** 2 + v ** 2) / (0.6 * size)
        r2 = torch.sqrt((u + d) ** 2 + (v - 0.1) ** 2) / (0.6 * size)
        tail = torch.exp(-((v - 0.5 * u ** 2) / 0.08) ** 2) * torch.exp(-(u ** 2) / 0.5)
        img = torch.exp(-r1) + torch.exp(-r2) + 0.5 * tail
        col = torch.tensor([0.9, 1.0, 1.1])
    img = col[:, None, None] * img[None] * (3 + 5 * torch.rand(1, generator=g).item())
    img = img + 0.3 * torch.randn(3, n, n, generator=g)       # sky noise, background subtracted
    return img


class GalaxyCNN(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.Conv2d(w, w, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(2 * w, 64), nn.ReLU(),
                                        nn.Dropout(0.2), nn.Linear(64, N_CLASSES))

    def forward(self, x):
        return self.classifier(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [16, 24, 32][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 100
    bad_step = [37, 61, 48][seed % 3] + seed // 3

    labels = torch.randint(0, N_CLASSES, (bs * steps,), generator=g)
    imgs = torch.stack([_galaxy(g, int(c)) for c in labels])

    # the edge shard: objects near a chip gap, cutouts partially off the frame, filled with NaN
    lo, hi = bad_step * bs, (bad_step + 1) * bs
    n_edge = 3 + seed % 4
    for j in range(lo, lo + n_edge):
        w = 4 + int(torch.randint(0, 10, (1,), generator=g))
        if j % 2 == 0:
            imgs[j, :, :, :w] = float("nan")
        else:
            imgs[j, :, -w:, :] = float("nan")

    imgs = torch.asinh(imgs)                                   # arcsinh stretch keeps NaN
    mu = imgs.nanmean(dim=(0, 2, 3), keepdim=True)
    sd = (imgs - mu).pow(2).nanmean(dim=(0, 2, 3), keepdim=True).sqrt()
    imgs = (imgs - mu) / sd
    if fixed:
        imgs = torch.nan_to_num(imgs, nan=0.0)                 # off-chip pixels -> sky level

    torch.manual_seed(seed)
    model = GalaxyCNN(width)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    batches = [(imgs[i * bs:(i + 1) * bs], labels[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
