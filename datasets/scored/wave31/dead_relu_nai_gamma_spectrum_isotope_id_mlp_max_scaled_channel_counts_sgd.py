"""Radio-isotope identification from NaI(Tl) gamma-ray spectra (256 energy channels; Cs-137,
Co-60, Am-241, Ba-133, I-131, K-40, background-only): a ReLU MLP on the channel counts scaled by the
spectrum maximum, trained with plain SGD and cross-entropy.

Mechanism: the learning rate (4-6) was tuned when the spectra were normalised to unit area
(channel values ~1e-3, so a huge lr was needed); the preprocessing was later switched to scaling by
the spectrum maximum (channel values up to 1) and the lr was kept.  The inputs are non-negative,
so every hidden unit's weight gradient has one sign across the whole row (the sign of its
back-propagated error), and the first few steps move a unit's pre-activation on every spectrum by
lr * delta * (1 + ||x||^2), far past zero.  After a short burst of enormous logits most of the first
hidden layer is negative for every spectrum; those ReLUs pass no gradient and never come back.
With the first layer (almost) fully dead the classifier sits at the class-prior loss (~ln 7) for
the rest of the run, while the same network at a sane learning rate learns the photo-peaks.

ORIGIN: ``net.1``, the ReLU after the first Linear: the first unit population that dies, which
cuts the input to every later layer.

Fix: learning rate 0.5 instead of 4-6 (the first updates no longer throw the units'
pre-activations past zero); same model, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("Dying ReLU after large first SGD steps on non-negative, non-centred inputs (CS231n notes "
          "'as much as 40% of your network can be dead'; Lu et al. 2019); ANN isotope "
          "identification on NaI spectra (Kamuda et al. 2017/2020)")

N_CH = 256
# photo-peak energies (keV) per isotope class; class 0 is background only
PEAKS = [[], [662], [1173, 1332], [59.5], [81, 356, 303], [364, 637], [1461]]


def _spectra(g, n):
    e = torch.linspace(20, 1600, N_CH)
    cls = torch.randint(0, len(PEAKS), (n,), generator=g)
    bkg = 30 * torch.exp(-e / 300)[None] * (0.7 + 0.6 * torch.rand(n, 1, generator=g))
    spec = bkg.clone()
    for i in range(n):
        strength = 20 + 200 * torch.rand(1, generator=g).item()
        for p in PEAKS[int(cls[i])]:
            sigma = 0.07 * p / 2.355 * (662 / p) ** 0.5          # NaI resolution ~7% at 662 keV
            compton_edge = p * (1 - 1 / (1 + 2 * p / 511))
            spec[i] += strength * torch.exp(-0.5 * ((e - p) / sigma) ** 2)
            spec[i] += 0.15 * strength * torch.sigmoid((compton_edge - e) / 15)  # continuum
    counts = torch.poisson(spec, generator=g)
    return counts, cls


class MLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [128, 256, 192][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = 0.5 if fixed else [4.0, 4.0, 5.0][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 150

    counts, y = _spectra(g, bs * steps)
    x = counts / counts.max(dim=1, keepdim=True).values       # per-spectrum max scaling, >= 0

    torch.manual_seed(seed)
    layers, d = [], N_CH
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, len(PEAKS)))
    model = MLP(layers)

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
