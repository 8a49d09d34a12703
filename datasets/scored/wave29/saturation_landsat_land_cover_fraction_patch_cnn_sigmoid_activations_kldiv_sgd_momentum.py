"""Sub-pixel land-cover fraction CNN on Landsat patches with sigmoid activations in every conv
layer, trained on soft (fractional) labels with KL divergence and SGD+momentum.

Mechanism: the model estimates, for each 30 m Landsat patch, the fractions of forest, cropland,
grassland, built-up, water and bare ground derived from a 1 m reference map (soft labels,
``KLDivLoss(log_softmax(logits), fractions)``).  It follows older remote-sensing CNN code that
uses ``nn.Sigmoid()`` after every convolution and no normalisation layers (convs He-initialised
by the project's init helper, classifier zero-initialised so training starts at uniform
fractions).  Sigmoid outputs
are all positive (mean ~0.5) and its derivative is at most 0.25, so with 6-9 stacked conv
layers the class-specific signal is washed out into a near-constant 0.5 map and the backward
signal shrinks by >4x per layer: the lower layers receive essentially no gradient and the top
sees inputs that barely depend on the patch.  The predicted fractions stay at the batch
average and the KL sits at (or drifts above) its starting value.

ORIGIN: ``features.1`` -- the first Sigmoid; from there on each sigmoid layer compounds the
saturation/vanishing (the whole stack is affected, the first one is where it starts).

Fix: ReLU activations instead of sigmoids (non-saturating); same depth, width, init, data,
optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "features.1"
SOURCE = ("Sub-pixel land-cover fraction estimation from Landsat with CNNs trained on fractional "
          "labels; sigmoid-activation CNNs in early remote-sensing deep-learning code; Glorot & "
          "Bengio 2010 on saturation/vanishing gradients of deep sigmoid networks.")

N_CLS = 6


class FractionCNN(nn.Module):
    def __init__(self, cin, width, depth, act):
        super().__init__()
        layers, c = [], cin
        for i in range(depth):
            conv = nn.Conv2d(c, width, 3, padding=1)
            nn.init.kaiming_normal_(conv.weight)  # the project's init helper for all convs
            nn.init.zeros_(conv.bias)
            layers += [conv, act()]
            c = width
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(width, N_CLS)
        nn.init.zeros_(self.classifier.weight)  # start from the uniform (prior) fractions
        nn.init.zeros_(self.classifier.bias)

    def forward(self, x):
        return F.log_softmax(self.classifier(self.features(x).mean((2, 3))), dim=-1)


def _patches(n, size, g):
    # spectral signatures (blue, green, red, NIR, SWIR1, SWIR2) of the six classes
    sig = torch.tensor([
        [0.03, 0.05, 0.03, 0.35, 0.15, 0.07],   # forest
        [0.05, 0.08, 0.07, 0.40, 0.25, 0.14],   # cropland
        [0.05, 0.08, 0.08, 0.28, 0.28, 0.18],   # grassland
        [0.12, 0.13, 0.14, 0.20, 0.24, 0.22],   # built-up
        [0.06, 0.05, 0.03, 0.02, 0.01, 0.01],   # water
        [0.14, 0.18, 0.22, 0.27, 0.35, 0.30],   # bare
    ])
    logits = 2.0 * torch.randn(n, N_CLS, 2, 2, generator=g)
    cover = F.interpolate(logits, size=(size, size), mode="bilinear", align_corners=False)
    cover = torch.softmax(3 * cover, dim=1)                          # (n, K, H, W) per-pixel mix
    x = torch.einsum("nkhw,kb->nbhw", cover, sig)
    x = x + 0.01 * torch.randn(n, 6, size, size, generator=g)
    x = (x - x.mean((0, 2, 3), keepdim=True)) / x.std((0, 2, 3), keepdim=True)
    frac = cover.mean((2, 3))
    return x, frac


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(99 + seed)
    torch.manual_seed(seed)
    depth = [6, 8, 7][seed % 3]
    width = [32, 24, 32][seed % 3]
    batch = [16, 24, 16][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    steps, size = 150, 16
    x, frac = _patches(steps * batch, size, g)
    model = FractionCNN(6, width, depth, nn.ReLU if fixed else nn.Sigmoid)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [(x[i * batch:(i + 1) * batch], frac[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.KLDivLoss(reduction="batchmean"),
            "batches": batches, "steps": steps}
