"""Lung-nodule malignancy classification on CT patches (LIDC-IDRI style) with a small
BN-free 3D CNN (conv3d-LeakyReLU blocks as in nnU-Net, max-pooling, global average pooling,
linear head; no normalisation layers because the 3D batches are tiny), trained with SGD +
momentum and cross-entropy.

Mechanism: the patches are fed in raw Hounsfield units, straight from the DICOM
(RescaleSlope/Intercept applied, but no lung window and no scaling): air is -1000, soft
tissue 0..100, calcification/bone several hundred. With Kaiming-initialised convs the
activations are ~1e3 from the first layer on, the logits are ~1e3-1e4, the cross-entropy of
the first batch is in the tens to hundreds and its gradients are of the same
magnitude: the first momentum-SGD step throws the weights far away and within a few steps
the loss overflows to inf/NaN (LeakyReLU units cannot all switch off, so nothing stops the
blow-up).

ORIGIN: ``features.0`` -- the first conv3d receives the unscaled HU values.

Fix: the standard preprocessing -- clip to the lung window [-1000, 400] HU and rescale to
[0, 1]; model, optimiser and data otherwise identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "features.0"
SOURCE = ('LUNA16 / LIDC nodule-classification preprocessing (lung window [-1000, 400] HU, '
          'rescaled to [0, 1]); known NaN-in-the-first-iterations pattern when it is '
          'skipped and raw HU reach a BN-free 3D CNN')


class Nodule3DCNN(nn.Module):
    def __init__(self, widths):
        super().__init__()
        layers, c = [], 1
        for i, w in enumerate(widths):
            layers += [nn.Conv3d(c, w, 3, padding=1), nn.LeakyReLU(0.01, inplace=True)]
            if i < len(widths) - 1:
                layers.append(nn.MaxPool3d(2))
            c = w
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, 2)
        for m in self.modules():
            if isinstance(m, nn.Conv3d):
                nn.init.kaiming_normal_(m.weight, a=0.01, nonlinearity="leaky_relu")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool3d(self.features(x), 1).flatten(1))


def make_batch(g, bs, size):
    """Lung parenchyma (~-850 HU) with vessels, a nodule at the centre: benign = smooth,
    round, often calcified (+400 HU core); malignant = spiculated/lobulated soft tissue."""
    r = torch.linspace(-1, 1, size)
    zz, yy, xx = torch.meshgrid(r, r, r, indexing="ij")
    vols, labels = [], []
    for _ in range(bs):
        mal = int(torch.rand(1, generator=g) < 0.5)
        v = -850 + 40 * torch.randn(size, size, size, generator=g)
        # a vessel
        a, b = (torch.rand(2, generator=g) - 0.5).tolist()
        v = v + 800 * (((yy - a) ** 2 + (xx - b) ** 2) < 0.01).float()
        rad = 0.25 + 0.2 * float(torch.rand(1, generator=g)) + 0.15 * mal
        dist = torch.sqrt(zz ** 2 + yy ** 2 + xx ** 2)
        if mal:
            ang = torch.atan2(yy, xx)
            spikes = 1 + 0.35 * torch.sin(7 * ang) * torch.cos(5 * zz * 3.14)
            nod = dist < rad * spikes
            v = torch.where(nod, 40 + 30 * torch.randn(size, size, size, generator=g), v)
        else:
            nod = dist < rad
            v = torch.where(nod, 30 + 20 * torch.randn(size, size, size, generator=g), v)
            if float(torch.rand(1, generator=g)) < 0.85:
                v = torch.where(dist < 0.5 * rad, torch.full_like(v, 450.0), v)
        vols.append(v)
        labels.append(mal)
    return torch.stack(vols)[:, None], torch.tensor(labels)


def lung_window(hu):
    return (hu.clamp(-1000.0, 400.0) + 1000.0) / 1400.0


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(widths=(8, 16, 32), lr=0.03, bs=8, size=16, steps=60),
        dict(widths=(8, 16, 16, 32), lr=0.01, bs=6, size=20, steps=70),
        dict(widths=(12, 24), lr=0.05, bs=10, size=16, steps=50),
    ][seed % 3]
    torch.manual_seed(seed)
    model = Nodule3DCNN(cfg["widths"])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    g = torch.Generator().manual_seed(480 + seed)
    batches = [make_batch(g, cfg["bs"], cfg["size"]) for _ in range(cfg["steps"])]
    if fixed:
        batches = [(lung_window(x), y) for x, y in batches]
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
