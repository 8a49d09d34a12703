"""Thermal-inspection CNN: a small conv net (stem, two strided convs, global max+mean pooling,
linear head) regresses the hotspot temperature of 24x24 radiometric thermal frames (e.g. an
overheating connector on an electrical panel). The frames are fed exactly as the camera SDK
returns them, uint16 centi-Kelvin counts (~29 000-36 000), and the target is the hotspot
temperature in Kelvin (~300-360). With default PyTorch init the stem's pre-activations are ~1e4,
the first prediction is off by tens to hundreds of Kelvin (MSE 1e3-1e5 at step 0) and the
gradients w.r.t. the stem weights carry another factor of ~3e4 from the raw inputs; the first
momentum-SGD update throws the weights out by orders of magnitude and the loss is NaN from step
1.
Fixed: inputs standardised ((counts - mean) / std over the training frames) and targets
standardised the same way (the loss is the MSE in standardised units); model, init, optimiser
and lr are unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "stem"
SOURCE = ("FLIR/Teledyne radiometric thermal frames delivered as uint16 centi-Kelvin (T*100) by "
          "the camera SDKs; 'loss is NaN when training on raw thermal images' reports fixed by "
          "normalising the 16-bit frames and the temperature targets")

RES = 24


class ThermalHotspotNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 16, 3, 1, 1)
        self.down1 = nn.Conv2d(16, 32, 3, 2, 1)
        self.down2 = nn.Conv2d(32, 32, 3, 2, 1)
        self.head = nn.Linear(64, 1)

    def forward(self, x):
        h = F.relu(self.stem(x))
        h = F.relu(self.down1(h))
        h = F.relu(self.down2(h))
        pooled = torch.cat([h.amax((2, 3)), h.mean((2, 3))], 1)
        return self.head(pooled).squeeze(-1)


def _frames(g, n):
    yy, xx = torch.meshgrid(torch.arange(RES).float(), torch.arange(RES).float(), indexing="ij")
    ambient = 290 + 8 * torch.rand(n, 1, 1, generator=g)
    temp = ambient + 2 * torch.randn(n, RES, RES, generator=g).clamp(-2, 2) * 0.3
    c = torch.rand(n, 2, 1, 1, generator=g) * (RES - 8) + 4
    w = 1.5 + 2 * torch.rand(n, 1, 1, generator=g)
    peak = 5 + 60 * torch.rand(n, 1, 1, generator=g)
    temp = temp + peak * torch.exp(-((xx - c[:, 0]) ** 2 + (yy - c[:, 1]) ** 2) / (2 * w ** 2))
    counts = torch.round(temp * 100.0)                  # uint16 centi-Kelvin, as the SDK delivers
    hotspot = (ambient + peak).flatten()                # Kelvin
    return counts.unsqueeze(1), hotspot


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(19000 + seed)
    x, y = _frames(g, 384)
    if fixed:
        x = (x - x.mean()) / x.std()
        y = (y - y.mean()) / y.std()
    steps, bs = 120, 16
    batches = [(x[(s * bs) % 384:(s * bs) % 384 + bs], y[(s * bs) % 384:(s * bs) % 384 + bs]) for s in range(steps)]
    model = ThermalHotspotNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
