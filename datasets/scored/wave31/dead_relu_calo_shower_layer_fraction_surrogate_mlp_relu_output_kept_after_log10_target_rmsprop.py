"""Fast calorimeter-simulation surrogate: given the incident particle energy, polar angle and
particle type (e / gamma / pi), an MLP predicts the longitudinal shower profile, i.e. the energy
deposited in each of the N sampling layers, trained with RMSprop and a Huber loss.

Mechanism: the first version of the surrogate regressed the deposited energies themselves (GeV,
non-negative) and ended the network with ``nn.ReLU()`` "so that deposits are never negative".
Because the deposits span four decades, the target was later switched to
log10(E_layer / E_incident) (a sampling fraction, always < 1, so every target is negative: about -1.8 to
-4), but the output ReLU was kept.  From the first steps every gradient on the output pushes the
pre-activations down; as soon as an output unit's pre-activation is negative for all showers its
ReLU passes no gradient and never turns on again.  Within a few steps all outputs are dead, the
prediction is identically 0 and the loss stays at its initial value, while the same network with a
linear output learns the profile.

ORIGIN: ``head.1``, the output ReLU: the units that die, and the only place the gradient is cut
(the trunk is healthy until it stops receiving gradient).

Fix: drop the output ReLU (``nn.Identity()`` in its place: a linear output for the
log-fraction target); same model otherwise, same optimiser, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = ("Known pattern: ReLU output activation kept after the regression target became negative "
          "('network predicts all zeros', StackOverflow/PyTorch forums); fast calorimeter "
          "surrogates predicting per-layer energies (CaloGAN, Paganini et al. 2018; ATLAS "
          "FastCaloGAN; CaloChallenge)")


def _showers(g, n, n_layers):
    e_inc = 10 ** (torch.rand(n, generator=g) * 2 + 0.0)            # 1 .. 100 GeV
    theta = torch.rand(n, generator=g) * 0.6                         # rad
    ptype = torch.randint(0, 3, (n,), generator=g)                   # e, gamma, pi
    # Gamma-distribution longitudinal profile (Longo); hadrons start later and are broader
    t = torch.arange(n_layers).float()[None] + 0.5
    b = torch.where(ptype == 2, torch.full((n,), 0.35), torch.full((n,), 0.5))[:, None]
    tmax = (torch.log(e_inc / 0.02) - 0.5 + (ptype == 1).float() * 0.5
            + (ptype == 2).float() * 1.5)[:, None] / math.e
    a = b * tmax * math.e + 1
    path = t / torch.cos(theta)[:, None]
    prof = (b * path) ** (a - 1) * torch.exp(-b * path)
    prof = prof / prof.sum(1, keepdim=True)
    samp = 0.08 * prof * (1 + 0.1 * torch.randn(n, n_layers, generator=g))
    frac = samp.clamp_min(1e-4)
    x = torch.stack([torch.log10(e_inc), theta / 0.6,
                     (ptype == 0).float(), (ptype == 1).float(), (ptype == 2).float()], 1)
    return x, torch.log10(frac)


class ShowerSurrogate(nn.Module):
    def __init__(self, layers, d, n_layers, out_act):
        super().__init__()
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(d, n_layers), out_act)

    def forward(self, x):
        return self.head(self.trunk(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_layers = [12, 16, 10][seed % 3]
    width = [128, 64, 96][seed % 3]
    depth = [3, 2, 4][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 150

    x, y = _showers(g, bs * steps, n_layers)

    torch.manual_seed(seed)
    layers, d = [], x.shape[1]
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.SiLU()]
        d = width
    model = ShowerSurrogate(layers, d, n_layers, out_act=nn.Identity() if fixed else nn.ReLU())

    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    loss_fn = nn.HuberLoss(delta=1.0)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
