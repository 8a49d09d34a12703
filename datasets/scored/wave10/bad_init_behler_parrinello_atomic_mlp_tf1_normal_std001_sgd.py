"""Behler-Parrinello style neural network potential: every atom is described by a vector of
radial (G2) symmetry functions computed from its neighbours, a shared 5-layer tanh atomic network
maps descriptor + element one-hot to an atomic energy, and the molecular energy is the masked sum
of atomic energies. The port of a TF1 training script keeps its `tf.random_normal_initializer(
stddev=0.01)` for every Dense layer. With width 48 each layer multiplies the activation scale by
about 0.01*sqrt(48) ~ 0.07, so the atomic energies are ~1e-6 at step 0, the backward signal to the
early layers shrinks by the same factor per layer, and plain momentum SGD cannot escape: the loss
sits at the variance of the (standardised) energies without ever producing a non-finite value.
Fixed: Xavier (Glorot) init, the initialiser the original BPNN / n2p2 / AENET codes use."""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "atom_net.0"
SOURCE = ("TF1 habit of tf.random_normal_initializer(stddev=0.01) carried into a Behler-Parrinello "
          "NNP (Behler & Parrinello 2007; n2p2/AENET use Glorot-type init); vanishing-signal stall")

N_ATOMS, N_ELEM, N_G2 = 10, 3, 12
ETAS = torch.linspace(0.5, 6.0, N_G2)
RC = 4.0


def g2_descriptors(pos, mask):
    d = torch.cdist(pos, pos)                                  # [B,N,N]
    fc = 0.5 * (torch.cos(math.pi * d.clamp(max=RC) / RC) + 1.0) * (d < RC).float()
    eye = torch.eye(pos.shape[1]).bool()
    fc = fc.masked_fill(eye, 0.0) * mask[:, None, :] * mask[:, :, None]
    g = torch.exp(-ETAS[None, None, None, :] * (d[..., None] - 1.0) ** 2) * fc[..., None]
    return g.sum(2)                                            # [B,N,G]


class BPNN(nn.Module):
    def __init__(self, width=48, depth=5):
        super().__init__()
        layers, d_in = [], N_G2 + N_ELEM
        for _ in range(depth):
            layers += [nn.Linear(d_in, width), nn.Tanh()]
            d_in = width
        layers.append(nn.Linear(d_in, 1))
        self.atom_net = nn.Sequential(*layers)

    def forward(self, desc, species, mask):
        onehot = torch.nn.functional.one_hot(species, N_ELEM).float()
        e_atom = self.atom_net(torch.cat([desc, onehot], -1)).squeeze(-1)
        return (e_atom * mask).sum(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = BPNN()
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.xavier_normal_(m.weight)
            else:
                nn.init.normal_(m.weight, std=0.01)      # TF1 random_normal(stddev=0.01)
            nn.init.zeros_(m.bias)

    def make_batch(B=64):
        n = torch.randint(5, N_ATOMS + 1, (B,), generator=g)
        mask = (torch.arange(N_ATOMS)[None, :] < n[:, None]).float()
        pos = torch.randn(B, N_ATOMS, 3, generator=g) * 1.2
        species = torch.randint(0, N_ELEM, (B, N_ATOMS), generator=g)
        desc = g2_descriptors(pos, mask)
        # reference energy: element-dependent Morse-like pair energy (a stand-in for DFT labels)
        d = torch.cdist(pos, pos) + torch.eye(N_ATOMS) * 10
        de = torch.tensor([0.6, 1.0, 1.4])[species]
        pair = (1 - torch.exp(-1.5 * (d - 1.1))) ** 2 - 1
        pair = pair.clamp(max=3.0) * (mask[:, None, :] * mask[:, :, None]) * (d < RC).float()
        e = 0.5 * (pair.sum(2) * de).sum(1) + (de * mask).sum(1)
        return (desc, species, mask), e

    raw = [make_batch() for _ in range(8)]
    allE = torch.cat([b[1] for b in raw])
    mu, sd = allE.mean(), allE.std()
    alld = torch.cat([x[0][x[2] > 0] for x, _ in raw])
    dmu, dsd = alld.mean(0), alld.std(0) + 1e-6                 # usual symmetry-function scaling
    data = [(((x[0] - dmu) / dsd * x[2][..., None], x[1], x[2]), (e - mu) / sd) for x, e in raw]
    steps = 160
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.002, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
