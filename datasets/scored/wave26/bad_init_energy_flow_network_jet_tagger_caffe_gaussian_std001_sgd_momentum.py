"""Energy Flow Network (EFN) W-vs-QCD jet tagger whose Linear layers are initialised Caffe-style.

Mechanism: the EFN (Komiske, Metodiev, Thaler 2019) maps each constituent's angular position
(eta, phi) through a per-particle ReLU network Phi, takes the energy-weighted sum
sum_i z_i Phi(eta_i, phi_i), and classifies it with a second ReLU network F.  The port re-uses
a Caffe "gaussian std 0.01" weight filler (weights ~ N(0, 0.01), zero biases) for every layer.
With fan-ins of 64-128 each ReLU layer multiplies the activation scale by
0.01 * sqrt(fan_in / 2) ~ 0.06-0.08, so after the 7-9 stacked layers of Phi and F the logit is
~1e-8 and every weight gradient is a product of those tiny factors: the signal shrinks
geometrically with depth from step 0.  SGD+momentum only moves the output bias (which already
sits at the 50/50 prior), so the BCE loss sits at ln 2 for the whole run.

ORIGIN: "phi.0", the first Linear of the per-particle network.  It is where the activation
scale first collapses (its fan-in is only 2, so its output is ~1e-3 of its input); every
later layer multiplies the shrinkage, so the vanishing starts there.

Fix: Kaiming-normal (fan_in, ReLU gain) initialisation of the same layers, zero biases.
Seeds change the depth of Phi and F, the width, the learning rate and the batch size.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "phi.0"
SOURCE = ("Energy Flow Networks (Komiske et al., JHEP 2019, energyflow package) re-implemented in "
          "PyTorch with a Caffe 'gaussian std=0.01' weight filler copied from an old jet-image "
          "CNN prototxt; known pattern of std=0.01 Gaussian init stalling deep ReLU nets "
          "(He et al. 2015, Sec. 2.2 on VGG not converging with std 0.01).")

NPART = 24


def _jets(n, g):
    y = (torch.rand(n, generator=g) < 0.5).float()
    mult = torch.randint(10, NPART + 1, (n,), generator=g)
    eta = torch.zeros(n, NPART)
    phi = torch.zeros(n, NPART)
    z = torch.zeros(n, NPART)
    for j in range(n):
        m = int(mult[j])
        e = torch.empty(m).exponential_(1.0, generator=g) + 0.05
        if y[j] > 0:  # two-prong W jet
            dr = 0.3 + 0.5 * torch.rand(1, generator=g)
            ang = 2 * math.pi * torch.rand(1, generator=g)
            share = 0.2 + 0.3 * torch.rand(1, generator=g)
            prong = (torch.rand(m, generator=g) < share).float()
            cx = (prong - share) * dr * torch.cos(ang)
            cy = (prong - share) * dr * torch.sin(ang)
            spread = 0.04
        else:  # one-prong QCD jet with wide-angle radiation
            cx = torch.zeros(m)
            cy = torch.zeros(m)
            spread = torch.where(torch.rand(m, generator=g) < 0.25,
                                 torch.full((m,), 0.25), torch.full((m,), 0.04))
        eta[j, :m] = cx + spread * torch.randn(m, generator=g)
        phi[j, :m] = cy + spread * torch.randn(m, generator=g)
        z[j, :m] = e / e.sum()
    return (z, torch.stack([eta, phi], -1)), y


class EFN(nn.Module):
    def __init__(self, width, latent, n_phi, n_f):
        super().__init__()
        layers, d = [], 2
        for _ in range(n_phi - 1):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers += [nn.Linear(d, latent), nn.ReLU()]
        self.phi = nn.Sequential(*layers)
        layers, d = [], latent
        for _ in range(n_f):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers += [nn.Linear(d, 1)]
        self.f = nn.Sequential(*layers)

    def forward(self, z, ang):
        pooled = (z.unsqueeze(-1) * self.phi(ang)).sum(1)
        return self.f(pooled).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    width = [64, 100, 128][seed % 3]
    n_phi = [3, 4, 3][seed % 3]
    n_f = [3, 3, 4][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 120
    torch.manual_seed(seed)
    model = EFN(width, 64, n_phi, n_f)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)   # Caffe gaussian filler, std 0.01
            nn.init.zeros_(m.bias)
    g = torch.Generator().manual_seed(1000 + seed)
    batches = [_jets(bs, g) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
