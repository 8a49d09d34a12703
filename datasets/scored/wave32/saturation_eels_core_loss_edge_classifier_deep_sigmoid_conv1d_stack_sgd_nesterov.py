"""Element identification from electron energy-loss spectra (EELS core-loss region): a deep
Conv1d stack with nn.Sigmoid after every convolution (the author reused an old "biologically
plausible" sigmoid CNN template), adaptive pooling to 8 positions and a Linear head over 8
elements' edges (cross-entropy, SGD with Nesterov momentum).

Mechanism: each sigmoid layer outputs values in (0, 1) centred near 0.5 and has derivative at
most 0.25; stacked 7-9 deep with default-scale convolutions, the hidden maps collapse towards
the same near-constant value for every spectrum and the backward signal shrinks by <= 0.25 per
layer (times the small conv gains). The head sees almost identical features for all classes,
the early filters receive ~1e-6 of the head's gradient, and the loss stays at ln(8) for the run
while the same sigmoid network with normalised pre-activations learns.

ORIGIN: "features.1", the first Sigmoid: the gradient attenuation and the squashing of the
spectra start at the first saturating unit and compound through each following one.
Fix: normalise the pre-activations - Conv1d -> BatchNorm1d -> Sigmoid in every block, which keeps
each sigmoid in its responsive range; everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "features.1"
SOURCE = ("Glorot & Bengio 2010 (sigmoid deep nets: top hidden layer saturates, gradients "
          "vanish); Ioffe & Szegedy 2015 (BN makes saturating nonlinearities trainable); Hochreiter 1991 vanishing gradient; CNN-based EELS edge identification "
          "(e.g. Chatzidakis & Botton 2019, Sci. Rep.)")

N_PTS, N_CLS = 256, 8


def _spectra(g, bs):
    e = torch.linspace(0, 1, N_PTS)
    y = torch.randint(0, N_CLS, (bs,), generator=g)
    onset = 0.1 + 0.1 * y.float() + 0.005 * torch.randn(bs, generator=g)
    bg = 3.0 * torch.exp(-e[None, :] * (2.0 + torch.rand(bs, 1, generator=g)))
    edge = torch.sigmoid((e[None, :] - onset[:, None]) / 0.005) * \
        torch.exp(-(e[None, :] - onset[:, None]).clamp_min(0) / 0.2)
    s = bg + (0.8 + 0.4 * torch.rand(bs, 1, generator=g)) * edge
    s = s + 0.05 * torch.randn(bs, N_PTS, generator=g)
    return ((s - 1.0) / 1.0).unsqueeze(1), y


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1400 + seed)
    depth = [7, 8, 9][seed % 3]
    ch = [16, 12, 20][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    steps = 150
    layers, c = [], 1
    for _ in range(depth):
        layers += [nn.Conv1d(c, ch, 5, padding=2), nn.Sigmoid()]
        if fixed:   # normalise the pre-activations: Conv -> BatchNorm -> Sigmoid
            layers.insert(len(layers) - 1, nn.BatchNorm1d(ch))
        c = ch
    model = nn.Sequential()
    model.add_module("features", nn.Sequential(*layers))
    model.add_module("pool", nn.AdaptiveAvgPool1d(8))
    model.add_module("flat", nn.Flatten())
    model.add_module("head", nn.Linear(8 * c, N_CLS))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    batches = [_spectra(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
