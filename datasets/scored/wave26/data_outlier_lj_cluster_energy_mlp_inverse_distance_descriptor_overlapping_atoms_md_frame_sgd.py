"""Energy model for 6-atom Lennard-Jones clusters (a toy machine-learned interatomic potential)
trained on MD frames, one batch of which holds a frame from a crashed trajectory where two atoms
sit almost on top of each other.

Mechanism: the potential is an MLP (SiLU) on the sorted vector of the 15 inverse pair distances
sigma/r_ij, trained with MSE on the standardised total energy (mean/std taken from a clean
reference run).  Frames are dumped from several MD runs; one run blew up (too-large time step)
and its last frame, with a pair at r ~ 0.2 sigma, was kept.  Its LJ energy is ~1e9 epsilon
(4 * (sigma/r)^12), i.e. ~5e8 standard deviations, so the batch that contains it gives an MSE
of ~1e15 and gradients ~1e8 times the usual ones.  The plain SGD+momentum step throws the
weights far away, the next forward pass overflows and the loss becomes inf/NaN.  Until that
batch the run is calm and learning.

ORIGIN: "net.0", the first Linear: it is the first layer the corrupt frame's descriptor
(1/r = 5, far outside the training range) and its enormous energy error reach; no layer is
faulty in itself.

Fix: filter the data: drop frames whose shortest distance is below 0.6 sigma (unphysical, from
an exploded trajectory) before batching.  Seeds change the width, depth, learning rate, batch
size and the step at which the corrupt frame arrives.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "net.0"
SOURCE = ("Known MLIP data-curation failure: exploded/unphysical MD frames (overlapping atoms, "
          "energies of 1e9 eV) left in training sets; e.g. filtering of high-force/high-energy "
          "outliers recommended in the NequIP/MACE and DeePMD-kit docs and in the ANI-1x / "
          "SPICE dataset papers.")

NAT = 6
_IU = torch.triu_indices(NAT, NAT, 1)


def _octa():
    a = 1.12246 / (2 ** 0.5)
    return torch.tensor([[a, 0, 0], [-a, 0, 0], [0, a, 0], [0, -a, 0], [0, 0, a], [0, 0, -a]])


def _frames(n, g):
    pos = _octa().unsqueeze(0) + 0.05 * torch.randn(n, NAT, 3, generator=g)
    return pos


def _featurise(pos):
    d = torch.cdist(pos, pos)[:, _IU[0], _IU[1]]
    e = (4.0 * ((1.0 / d) ** 12 - (1.0 / d) ** 6)).sum(1)
    inv = torch.sort(1.0 / d, dim=1, descending=True).values
    return inv, e, d.min(1).values


def build(seed: int, fixed: bool = False) -> dict:
    width = [64, 96, 128][seed % 3]
    depth = [3, 2, 3][seed % 3]
    lr = [0.02, 0.03, 0.015][seed % 3]
    bs = [32, 48, 40][seed % 3]
    bad_step = [35, 50, 65][seed % 3]
    steps = 120
    g = torch.Generator().manual_seed(3000 + seed)
    ref_inv, ref_e, _ = _featurise(_frames(2000, g))
    e_mu, e_sd = ref_e.mean(), ref_e.std()
    x_mu, x_sd = ref_inv.mean(0), ref_inv.std(0)
    batches = []
    for s in range(steps):
        pos = _frames(bs, g)
        if s == bad_step:          # last frame of an exploded trajectory: two atoms overlap
            k = int(torch.randint(0, bs, (1,), generator=g))
            pos[k, 1] = pos[k, 0] + torch.tensor([0.2, 0.0, 0.0])
        inv, e, dmin = _featurise(pos)
        if fixed:                   # data filter: drop unphysical frames
            keep = dmin > 0.6
            inv, e = inv[keep], e[keep]
        batches.append((((inv - x_mu) / x_sd), ((e - e_mu) / e_sd).unsqueeze(1)))
    torch.manual_seed(seed)
    layers, d = [], inv.shape[1]
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.SiLU()]
        d = width
    layers += [nn.Linear(d, 1)]
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
