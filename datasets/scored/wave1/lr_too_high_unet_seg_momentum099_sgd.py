"""Two-level U-Net (conv blocks, max-pool down, transposed-conv up, skip concatenation; no
normalisation layers, as in the original U-Net) for binary foreground segmentation of synthetic
cell images, trained with SGD and momentum 0.99 -- the momentum value from the U-Net paper -- but
with lr = 0.3 taken from a (linearly batch-scaled) ResNet/BatchNorm recipe that assumes momentum
0.9 and normalisation layers. With momentum 0.99 the effective step is lr / (1 - 0.99) = 30, far
beyond what this un-normalised network tolerates: within a few dozen steps the weights oscillate
with growing amplitude, the logits blow up and the BCE loss either overflows to NaN or, after the
ReLUs have been knocked out, sits at or above its starting value. Only the learning rate differs
in the fixed run (0.3 -> 0.01).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ('Ronneberger et al. 2015 U-Net (SGD, momentum 0.99) combined with a batch-scaled '
          'ImageNet-style learning rate; known pattern: effective step lr/(1-momentum)')


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = block(1, 8)
        self.enc2 = block(8, 16)
        self.bottleneck = block(16, 32)
        self.up2 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.dec2 = block(32, 16)
        self.up1 = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec1 = block(16, 8)
        self.out = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.bottleneck(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1)


def _make_batch(g, n, s=24):
    ii = torch.arange(s).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    imgs = torch.zeros(n, 1, s, s)
    masks = torch.zeros(n, 1, s, s)
    for i in range(n):
        for _ in range(3):
            cy, cx = (torch.rand(2, generator=g) * (s - 6) + 3).tolist()
            r = float(torch.rand(1, generator=g)) * 3 + 2
            m = ((yy - cy) ** 2 + (xx - cx) ** 2 <= r * r).float()
            masks[i, 0] = torch.maximum(masks[i, 0], m)
        imgs[i, 0] = 1.0 * masks[i, 0] + 0.2 * torch.randn(s, s, generator=g)
    return imgs, masks


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = UNet()
    batches = [_make_batch(g, 8) for _ in range(10)]
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else 0.3, momentum=0.99)
    steps = 200
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
