"""Crop-type classifier on Sentinel-2 L2A patches (10 bands, 16x16 px): a plain conv-LeakyReLU CNN with
global average pooling, SGD with momentum. The GeoTIFF tiles store surface reflectance as uint16
digital numbers (reflectance x 10000, typical values 200-6000, NIR up to ~8000) and the loader
casts them to float without dividing by the 10000 quantification value or standardising per band.
The first conv layer therefore sees inputs three to four orders of magnitude larger than its init
assumes: the logits are in the thousands at step 0, the cross-entropy is huge from the first batch,
and the first SGD updates (gradients scaled by the same raw values) blow the weights up until the
loss is inf/NaN. Fix: divide by 10000 and standardise each band with the training-set mean/std."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("ESA Sentinel-2 L2A product spec (BOA_QUANTIFICATION_VALUE = 10000, uint16 DN); EuroSAT / "
          "BigEarthNet / crop-type repos' normalisation step; reports of NaN losses when training on "
          "raw DN GeoTIFFs read with rasterio")

N_CLS = 5
BANDS = 10


class CropCNN(nn.Module):
    def __init__(self, ch=24):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(BANDS, ch, 3, padding=1), nn.LeakyReLU(0.1),
            nn.Conv2d(ch, ch, 3, padding=1), nn.LeakyReLU(0.1), nn.MaxPool2d(2),
            nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.LeakyReLU(0.1),
        )
        self.fc = nn.Linear(2 * ch, N_CLS)

    def forward(self, x):
        return self.fc(self.net(x).mean((2, 3)))


# per-class mean reflectance spectra (B2,B3,B4,B5,B6,B7,B8,B8A,B11,B12), reflectance units
SPECTRA = torch.tensor([
    [0.04, 0.07, 0.05, 0.12, 0.30, 0.36, 0.40, 0.42, 0.22, 0.12],   # maize
    [0.05, 0.08, 0.07, 0.14, 0.25, 0.29, 0.32, 0.34, 0.26, 0.16],   # wheat
    [0.03, 0.06, 0.04, 0.10, 0.35, 0.45, 0.50, 0.52, 0.20, 0.09],   # grassland
    [0.10, 0.13, 0.16, 0.19, 0.22, 0.24, 0.26, 0.27, 0.33, 0.28],   # bare soil
    [0.06, 0.05, 0.03, 0.03, 0.03, 0.03, 0.02, 0.02, 0.01, 0.01],   # water
])
MEAN = SPECTRA.mean(0) * 10000
STD = SPECTRA.std(0) * 10000 + 300


def _batch(g, n, H=16, scaled=False):
    lab = torch.randint(0, N_CLS, (n,), generator=g)
    refl = SPECTRA[lab].view(n, BANDS, 1, 1) * (0.85 + 0.3 * torch.rand(n, 1, H, H, generator=g))
    refl = refl + 0.01 * torch.randn(n, BANDS, H, H, generator=g)
    dn = (refl.clamp(0, 1) * 10000).round()                       # uint16 digital numbers
    x = (dn - MEAN.view(1, -1, 1, 1)) / STD.view(1, -1, 1, 1) if scaled else dn
    return x, lab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CropCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    pool = [_batch(g, 16, scaled=fixed) for _ in range(10)]
    steps = 80
    batches = [pool[i % len(pool)] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
