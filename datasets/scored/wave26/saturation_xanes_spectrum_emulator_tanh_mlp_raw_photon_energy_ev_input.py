"""Fe K-edge XANES emulator: a tanh MLP maps (photon energy, local-structure descriptors) to the
normalised absorption mu(E); the photon energy is fed in raw eV (~7080-7200) while the
descriptors are standardised.

Mechanism: the emulator is evaluated point-wise on the 131-point energy grid of each spectrum,
so E is an input column.  The descriptors (coordination number, mean Fe-O distance, oxidation
state, distortion) were standardised, but E was left in eV "because it is a coordinate".
With Xavier-scale weights the first layer's pre-activations are w * 7100 ~ +-1e3 for every
unit and every sample: all first-layer tanh units sit at exactly +-1 (tanh'(1e3) = 0 in
float32), whatever the energy or the structure.  The rest of the network sees one constant
vector, the first layer gets no gradient, and the output head (zero-initialised, bias at the
mean absorption, so the emulator starts from the mean spectrum value) has nothing
input-dependent to learn from: the MSE stays at the variance of mu(E) for the whole run (no
inf/NaN; the targets are O(1), so the loss is not large).

ORIGIN: "net.1", the first Tanh: the saturation starts there (its inputs are ~1e3) and it
removes every dependence on the inputs for the later layers.

Fix: feed the energy relative to the edge and scaled, (E - 7112 eV) / 50 eV, like the other
columns; nothing else changes.  Seeds change the width, the depth, the learning rate and the
batch size.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("ML XANES emulators / fitting networks (e.g. Timoshenko et al. 2017 'Supervised "
          "machine-learning-based determination of 3D structure from XANES', Rankine & Penfold "
          "'XANESNET'); known tanh-saturation pitfall of feeding raw physical coordinates "
          "(eV, K, Pa) into tanh MLPs (PINN/coordinate-network input normalisation advice).")

E0 = 7112.0
ND = 4


def _spectra(n, g, grid):
    d = torch.randn(n, 1, ND, generator=g)                  # standardised descriptors
    e = grid.view(1, -1).expand(n, -1)                      # photon energy grid (eV)
    shift = 1.5 * d[..., 2] + 0.8 * d[..., 0]               # edge shift with oxidation state
    width = 2.5 + 0.4 * d[..., 3].abs()
    x = (e - E0 - shift) / width
    step = 0.5 + torch.atan(x) / torch.pi
    white = (0.6 + 0.25 * d[..., 1]) / (1 + ((e - E0 - shift - 8.0) / 4.0) ** 2)
    exafs = 0.08 * torch.sin((e - E0) / (6.0 + d[..., 1])) * (e > E0 + 15).float()
    mu = step + white + exafs
    return e, d.expand(-1, grid.numel(), -1), mu


def build(seed: int, fixed: bool = False) -> dict:
    width = [64, 96, 128][seed % 3]
    depth = [3, 2, 3][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [8, 12, 6][seed % 3]           # spectra per batch (x 131 energies)
    steps = 150
    g = torch.Generator().manual_seed(13000 + seed)
    grid = torch.linspace(E0 - 30.0, E0 + 100.0, 131)        # measured energy grid (eV)
    batches = []
    for _ in range(steps):
        e, d, mu = _spectra(bs, g, grid)
        e_col = (e - E0) / 50.0 if fixed else e
        batches.append((torch.cat([e_col.unsqueeze(-1), d], -1), mu.unsqueeze(-1)))
    mu_mean = torch.cat([b[1] for b in batches[:10]]).mean().item()
    torch.manual_seed(seed)
    layers, k = [], ND + 1
    for _ in range(depth):
        lin = nn.Linear(k, width)
        nn.init.xavier_uniform_(lin.weight)
        nn.init.zeros_(lin.bias)
        layers += [lin, nn.Tanh()]
        k = width
    head = nn.Linear(k, 1)
    nn.init.zeros_(head.weight)                 # start from the mean spectrum value
    nn.init.constant_(head.bias, mu_mean)
    layers += [head]
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
