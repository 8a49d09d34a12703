"""HybridSN (Roy et al. 2019) hyperspectral pixel classifier: a small stack of 3-D convs
over (spectral band, height, width) patches, a 2-D conv on the band-collapsed features,
and two dropout FC layers (ReLU, no BatchNorm -- as in the paper; He-normal init),
trained with momentum SGD on patches around each labelled pixel.

The bug: the AVIRIS-style cube is fed as the raw sensor values (scaled radiance / DN,
~2000-7000 per band, strongly correlated across bands) -- the PCA + per-band
standardisation step of the reference pipeline was skipped because "the 3-D convs will
learn the scale".

Mechanism: the first Conv3d (fan-in 7*3*3 = 63) receives inputs ~5000 and the He init
preserves that scale through the ReLU stack, so the logits are ~1e3-1e4 and the
cross-entropy is in the thousands from the very first step. The weight gradients are
proportional to those activations (the first layer's to the raw 5000-scale inputs), so
the first SGD steps are thousands of times too large: the weights jump to 1e6+, the
logits to 1e16 and the loss becomes inf/NaN within a few steps (or after a brief
dead-ReLU plateau).

ORIGIN: conv3d_1, the first layer that receives the unscaled cube.

Fix: per-band standardisation of the cube with the training-set mean and std (what the
reference pipeline does after PCA); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "conv3d_1"
SOURCE = ("Roy et al. 2019 HybridSN (3-D + 2-D CNN for hyperspectral classification, "
          "Indian Pines raw values ~1e3-1e4); reference code applies PCA and scaling; "
          "reports of loss in the thousands then NaN on raw .mat cubes.")


class HybridSN(nn.Module):
    def __init__(self, bands, patch, w, num_classes):
        super().__init__()
        self.conv3d_1 = nn.Conv3d(1, w, (7, 3, 3))
        self.conv3d_2 = nn.Conv3d(w, 2 * w, (5, 3, 3))
        self.conv3d_3 = nn.Conv3d(2 * w, 4 * w, (3, 3, 3))
        self.relu = nn.ReLU()
        b = bands - 7 - 5 - 3 + 3
        p = patch - 6
        self.conv2d = nn.Conv2d(4 * w * b, 8 * w, 3)
        p2 = p - 2
        self.fc1 = nn.Linear(8 * w * p2 * p2, 64)
        self.fc2 = nn.Linear(64, 32)
        self.drop = nn.Dropout(0.4)
        self.out = nn.Linear(32, num_classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv3d, nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)

    def forward(self, cube):  # cube: (B, 1, bands, patch, patch)
        x = self.relu(self.conv3d_1(cube))
        x = self.relu(self.conv3d_2(x))
        x = self.relu(self.conv3d_3(x))
        x = x.flatten(1, 2)                      # merge channels x bands for the 2-D conv
        x = self.relu(self.conv2d(x)).flatten(1)
        x = self.drop(self.relu(self.fc1(x)))
        x = self.drop(self.relu(self.fc2(x)))
        return self.out(x)


def make_batches(g, steps, bs, bands, patch, K, fixed):
    # class spectral signatures on top of a large shared illumination/offset spectrum
    wl = torch.linspace(0, 1, bands)
    base = 3000 + 2500 * torch.exp(-((wl - 0.45) / 0.25) ** 2)             # shared radiance
    sig = torch.stack([600 * torch.sin(2 * torch.pi * (k + 1) * wl / 2 + k) for k in range(K)])
    mean = base.view(1, 1, bands, 1, 1)
    std = torch.full((1, 1, bands, 1, 1), 700.0)
    out = []
    for _ in range(steps):
        y = torch.randint(0, K, (bs,), generator=g)
        gain = 0.7 + 0.6 * torch.rand(bs, 1, 1, 1, 1, generator=g)      # illumination
        spec = (base + sig[y]).view(bs, 1, bands, 1, 1) * gain
        noise = 200 * torch.randn(bs, 1, bands, patch, patch, generator=g)
        cube = spec.expand(bs, 1, bands, patch, patch) + noise
        if fixed:
            cube = (cube - mean) / std                                     # per-band standardisation
        out.append((cube, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    bands = [20, 24, 18][seed % 3]
    patch = [9, 9, 11][seed % 3]
    w = [4, 6, 6][seed % 3]
    K = [6, 7, 5][seed % 3]
    bs = [32, 24, 32][seed % 3]
    steps = [60, 80, 50][seed % 3]
    model = HybridSN(bands, patch, w, K)
    opt = torch.optim.SGD(model.parameters(), lr=[0.01, 0.005, 0.01][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=make_batches(g, steps, bs, bands, patch, K, fixed), steps=steps)
