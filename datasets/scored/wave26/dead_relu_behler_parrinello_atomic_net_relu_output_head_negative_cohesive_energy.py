"""Behler-Parrinello atomic neural network potential whose per-atom output head ends in a ReLU
(copied from a band-gap model), trained on cohesive energies that are all negative.

Mechanism: each atom's radial symmetry functions G2 (standardised) go through a shared atomic
tanh MLP whose outputs are averaged into the cohesive energy per atom, fitted with MSE to
second-moment tight-binding (Gupta) energies of strained, rattled 8-atom metal clusters,
all between about -2.1 and -1.5 eV/atom.  The atomic-network class was copied from the
group's band-gap model, where a final ReLU keeps the prediction >= 0.  Here every target is
negative, so the gradient always pushes the final pre-activation down; within a few steps it
is negative for every atom of every cluster, the ReLU outputs exactly 0 and its gradient is 0
for all inputs, and nothing upstream receives any signal again.  The loss freezes at
mean(E^2) ~ 3.5 (no inf/NaN) while the same net without the ReLU fits the energies.

ORIGIN: "atom_net.5", the ReLU at the end of the atomic network: it is the unit that dies and
blocks the gradient of every earlier layer.

Fix: a linear output (drop the final ReLU) for this signed target.  Seeds change the width,
the number of symmetry functions, the learning rate and the batch size.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "atom_net.5"
SOURCE = ("Behler & Parrinello, PRL 98, 146401 (2007) high-dimensional NNP; Gupta/SMTB-Q "
          "cluster energies; known pitfall of non-negative output activations (ReLU) left on a "
          "regression head whose targets are negative (e.g. PyTorch forum 'ReLU output layer "
          "network predicts only zeros', StackOverflow 'regression with relu output stuck').")

NAT = 8


def _clusters(n, g):
    # strained, rattled 2x2x2 cube fragments (nearest-neighbour distance ~2.55 A)
    cube = torch.tensor([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)]).float()
    scale = 2.55 * (0.92 + 0.18 * torch.rand(n, 1, 1, generator=g))
    pos = cube.unsqueeze(0) * scale + 0.15 * torch.randn(n, NAT, 3, generator=g)
    r = torch.cdist(pos, pos)
    off = 1 - torch.eye(NAT)
    r0, A, xi, p, q = 2.55, 0.09, 1.22, 10.2, 2.5
    rep = (A * torch.exp(-p * (r / r0 - 1)) * off).sum(2)
    band = (xi ** 2 * torch.exp(-2 * q * (r / r0 - 1)) * off).sum(2).sqrt()
    e = (rep - band).mean(1, keepdim=True)            # cohesive energy per atom (eV)
    return r, e


def _g2(r, etas, rc=6.0):
    off = 1 - torch.eye(NAT)
    fc = 0.5 * (torch.cos(torch.pi * r.clamp(max=rc) / rc) + 1) * off
    return torch.stack([(torch.exp(-eta * (r - 2.5) ** 2) * fc).sum(2) for eta in etas], -1)


class BPNN(nn.Module):
    def __init__(self, nsf, width):
        super().__init__()
        self.atom_net = nn.Sequential(
            nn.Linear(nsf, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
            nn.Linear(width, 1), nn.ReLU())            # head copied from the band-gap model

    def forward(self, g):
        return self.atom_net(g).mean(1)


class BPNNLinear(BPNN):
    def __init__(self, nsf, width):
        super().__init__(nsf, width)
        self.atom_net[5] = nn.Identity()


def build(seed: int, fixed: bool = False) -> dict:
    width = [32, 48, 64][seed % 3]
    nsf = [6, 8, 10][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 150
    g = torch.Generator().manual_seed(8000 + seed)
    etas = torch.logspace(-1.5, 0.5, nsf).tolist()
    r_ref, _ = _clusters(500, g)
    g_ref = _g2(r_ref, etas).reshape(-1, nsf)
    mu, sd = g_ref.mean(0), g_ref.std(0)
    batches = []
    for _ in range(steps):
        r, e = _clusters(bs, g)
        batches.append(((_g2(r, etas) - mu) / sd, e))
    torch.manual_seed(seed)
    model = (BPNNLinear if fixed else BPNN)(nsf, width)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
