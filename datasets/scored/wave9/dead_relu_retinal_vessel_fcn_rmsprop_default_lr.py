"""Small fully-convolutional retinal-vessel segmenter (DRIVE-style green-channel fundus patches in
[0, 1], class-balanced BCE) trained with ``torch.optim.RMSprop(model.parameters(), momentum=0.9)``
-- the recipe's momentum was copied but the lr was left at PyTorch's default 0.01, ten times the
Keras default the recipe was written for.  RMSprop's first updates are ~lr/sqrt(1-alpha) = 0.1
per weight, all in the sign of the first gradient and amplified by momentum; on the
non-centred, all-positive fundus intensities this shifts every ``body.0`` filter's pre-activation
far below zero, the ReLUs die on every pixel and the network output becomes the head bias alone.
With balanced BCE a constant prediction cannot lower the loss, so it plateaus (finite) from the
first few iterations.  The fix is a lower learning rate (1e-3)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "body.0"
SOURCE = ("torch.optim.RMSprop default lr=0.01 vs Keras 0.001; DRIVE vessel-segmentation FCN "
          "baselines; 'all outputs identical / loss does not decrease' dying-ReLU reports")


class VesselFCN(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=2, dilation=2), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(1)


def _patches(g, n, s=24):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    imgs, labs = [], []
    for _ in range(n):
        lab = torch.zeros(s, s)
        for _ in range(3):   # curved vessels: dark thin bands on a bright, vignetted background
            a, b, c = (torch.rand(3, generator=g) - 0.5) * torch.tensor([0.08, 2.0, 1.4 * s])
            d = (ys - (a * (xs - s / 2) ** 2 + b * (xs - s / 2) + s / 2 + c)).abs()
            lab = torch.maximum(lab, (d < 1.2).float())
        bg = 0.55 + 0.25 * torch.rand(1, generator=g) - 0.002 * ((xs - s / 2) ** 2 + (ys - s / 2) ** 2) / 4
        img = (bg - 0.3 * lab + 0.05 * torch.randn(s, s, generator=g)).clamp(0, 1)
        imgs.append(img); labs.append(lab)
    return torch.stack(imgs).unsqueeze(1), torch.stack(labs)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = VesselFCN()
    pool = [_patches(g, 8) for _ in range(10)]
    fg = torch.cat([y for _, y in pool]).mean()
    pos_weight = (1 - fg) / fg
    steps = 100
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(out, y):
        return F.binary_cross_entropy_with_logits(out, y, pos_weight=pos_weight)

    if fixed:
        opt = torch.optim.RMSprop(model.parameters(), lr=1e-3, momentum=0.9)
    else:
        opt = torch.optim.RMSprop(model.parameters(), momentum=0.9)   # default lr=0.01
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
