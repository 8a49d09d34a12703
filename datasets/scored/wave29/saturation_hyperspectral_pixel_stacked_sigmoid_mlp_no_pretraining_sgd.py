"""Hyperspectral pixel classifier in the stacked-autoencoder style (Chen et al. 2014): a deep
MLP with logistic-sigmoid hidden layers, trained end-to-end by SGD without the layer-wise
pretraining the recipe relied on.

Mechanism: each pixel's 100-band reflectance spectrum (standardised per band) is classified
into crop / vegetation classes by 6-9 fully connected layers with ``nn.Sigmoid()`` and a
softmax output (cross-entropy), exactly the fine-tuning network of the SAE recipe but started
from random weights.  Sigmoid units are non-zero-centred with a derivative of at most 0.25:
as Glorot & Bengio (2010) showed, the top hidden layer is driven into saturation early and
the backward signal shrinks >4x per layer, so the lower layers receive almost no gradient and
the top layer sees features that barely depend on the spectrum.  The loss sits at log(K).

ORIGIN: ``net.1`` -- the first sigmoid layer; the vanishing/saturating behaviour starts there
and compounds through every later sigmoid.

Fix: ReLU hidden activations (non-saturating), with the same depth, width, Glorot init, data,
SGD settings and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Chen et al. 2014 'Deep learning-based classification of hyperspectral data' (IEEE JSTARS, "
          "stacked autoencoder with logistic units, Indian Pines / Pavia); Glorot & Bengio 2010 on "
          "sigmoid saturation in deep networks trained without pretraining.")


class SpectralMLP(nn.Module):
    def __init__(self, bands, hidden, depth, n_cls, act):
        super().__init__()
        layers, d = [], bands
        for _ in range(depth):
            lin = nn.Linear(d, hidden)
            nn.init.xavier_uniform_(lin.weight)  # Glorot init, as in the SAE-era code
            nn.init.zeros_(lin.bias)
            layers += [lin, act()]
            d = hidden
        layers.append(nn.Linear(d, n_cls))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def _spectra(n, bands, n_cls, g):
    wl = torch.linspace(400, 2500, bands)
    centers = torch.rand(n_cls, 4, generator=g) * 2100 + 400
    amps = torch.rand(n_cls, 4, generator=g) * 0.3
    base = 0.05 + 0.4 * torch.sigmoid((wl - 720) / 25)[None] * torch.rand(n_cls, 1, generator=g)
    sig = base - (amps[:, :, None] * torch.exp(-((wl[None, None] - centers[:, :, None]) / 60) ** 2)).sum(1)
    y = torch.randint(0, n_cls, (n,), generator=g)
    scale = 1 + 0.15 * torch.randn(n, 1, generator=g)  # illumination / BRDF
    x = sig[y] * scale + 0.02 * torch.randn(n, bands, generator=g)
    x = (x - x.mean(0)) / x.std(0)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(121 + seed)
    torch.manual_seed(seed)
    depth = [6, 8, 7][seed % 3]
    hidden = [128, 96, 160][seed % 3]
    batch = [64, 32, 48][seed % 3]
    lr = [0.05, 0.08, 0.03][seed % 3]
    bands, n_cls, steps = 100, 9, 200
    x, y = _spectra(steps * batch, bands, n_cls, g)
    model = SpectralMLP(bands, hidden, depth, n_cls, nn.ReLU if fixed else nn.Sigmoid)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    batches = [(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps}
