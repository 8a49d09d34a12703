"""Healthy run: a tiny SegNet (Badrinarayanan et al. 2017) for 3-class segmentation of 24x24
synthetic scenes (background, discs, bars). The encoder's max-pools return their indices and the
decoder upsamples with MaxUnpool2d at exactly those positions, so every unpooled feature map is
75% exact zeros and the gradient reaching the encoder through each pool is non-zero at only one
position in four; many decoder conv inputs are zero and a large fraction of activations and
activation gradients are exactly 0 at every step. That looks like dead units or vanishing
gradients, but it is the sparse-by-design index unpooling; the cross-entropy drops steadily.
Trained with AdamW; fixed=True returns the same run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("SegNet (Badrinarayanan, Kendall & Cipolla, TPAMI 2017) max-pooling indices + "
          "nn.MaxUnpool2d decoder; sparse unpooled feature maps are expected behaviour")

RES, N_CLS = 24, 3


def _cbr(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1), nn.BatchNorm2d(cout), nn.ReLU())


class TinySegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = _cbr(1, 16)
        self.enc2 = _cbr(16, 32)
        self.pool = nn.MaxPool2d(2, 2, return_indices=True)
        self.unpool = nn.MaxUnpool2d(2, 2)
        self.dec2 = _cbr(32, 16)
        self.dec1 = _cbr(16, 16)
        self.classifier = nn.Conv2d(16, N_CLS, 3, 1, 1)

    def forward(self, x):
        h1, i1 = self.pool(self.enc1(x))          # 12x12
        h2, i2 = self.pool(self.enc2(h1))         # 6x6
        d2 = self.dec2(self.unpool(h2, i2, output_size=(RES // 2, RES // 2)))
        d1 = self.dec1(self.unpool(d2, i1, output_size=(RES, RES)))
        return self.classifier(d1)


def _make(g, n):
    yy, xx = torch.meshgrid(torch.arange(RES).float(), torch.arange(RES).float(), indexing="ij")
    lab = torch.zeros(n, RES, RES, dtype=torch.long)
    c = torch.rand(n, 2, generator=g) * (RES - 6) + 3
    r = 2.5 + 3 * torch.rand(n, generator=g)
    disc = ((xx - c[:, 0, None, None]) ** 2 + (yy - c[:, 1, None, None]) ** 2) < r[:, None, None] ** 2
    row = torch.randint(2, RES - 4, (n,), generator=g)
    bar = (yy >= row[:, None, None]) & (yy < row[:, None, None] + 3)
    lab[bar] = 2
    lab[disc] = 1
    levels = torch.tensor([0.0, 1.0, 0.5])
    tex = 0.15 * torch.sin(xx * 2.0)[None] * (lab == 2).float()
    img = levels[lab] + tex + 0.25 * torch.randn(n, RES, RES, generator=g)
    return img.unsqueeze(1), lab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(20000 + seed)
    x, y = _make(g, 256)
    steps, bs = 100, 16
    batches = [(x[(s * bs) % 256:(s * bs) % 256 + bs], y[(s * bs) % 256:(s * bs) % 256 + bs]) for s in range(steps)]
    model = TinySegNet()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
