"""ABX3 perovskite pseudo-cubic lattice-constant regression: a ReLU MLP on Shannon-radius
descriptors (r_A, r_B, r_X in Angstrom, Goldschmidt tolerance factor t, octahedral factor mu,
Pauling electronegativities, oxidation states) predicts the z-scored pseudo-cubic lattice
constant a_pc. MSE loss, SGD with plain momentum 0.9 at lr 0.1, the value from the
group's linear-regression baseline (which had no hidden units to kill).

Mechanism: the descriptors are all positive and un-centred (radii 0.4-2 A, chi up to 3.4,
oxidation states 1-3), so each first-layer pre-activation is its bias plus a sum over
always-positive features. The momentum-SGD updates of the first few steps (lr 0.1, momentum
0.9) overshoot: the biases and the weights on the positive features of most first-layer units
are driven so far negative that w.x + b < 0 for every composition in the table. Those ReLUs
output 0 and get zero gradient from then on; with (almost) the whole layer dead the
prediction is a constant, and the MSE sits at the target variance (~1) for the rest of the
run. Nothing goes non-finite.

ORIGIN: `net.1`, the ReLU after the first Linear: that is where the units die and where the
gradient to everything below stops.

Fix: lr 0.01 (same momentum, model, data and steps); the first updates no longer push the
units past the data, and the layer stays alive.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("Known pattern: 'dying ReLU' after large early SGD updates on un-centred positive "
          "inputs (CS231n notes on dead ReLUs: 'as much as 40% of your network can be dead if "
          "the learning rate is set too high'; Lu et al. 2019); perovskite lattice-constant ML "
          "from ionic radii (Jiang et al. 2006 / Javed et al. 2007 style descriptors).")


class PerovskiteMLP(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers, c = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(c, width), nn.ReLU()]
            c = width
        layers.append(nn.Linear(c, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _radii(g, n):
    rA = 1.0 + 0.9 * torch.rand(n, generator=g)
    rB = 0.45 + 0.55 * torch.rand(n, generator=g)
    rX = torch.where(torch.rand(n, generator=g) < 0.6, torch.full((n,), 1.40),
                     1.81 + 0.4 * torch.rand(n, generator=g))
    t = (rA + rX) / (2 ** 0.5 * (rB + rX))
    mu = rB / rX
    chiA = 0.8 + 0.6 * torch.rand(n, generator=g)
    chiB = 1.3 + 1.0 * torch.rand(n, generator=g)
    chiX = torch.where(rX < 1.5, torch.full((n,), 3.44), 2.8 + 0.4 * torch.rand(n, generator=g))
    oxA = torch.randint(1, 4, (n,), generator=g).float()
    oxB = 6 - oxA
    x = torch.stack([rA, rB, rX, t, mu, chiA, chiB, chiX, oxA, oxB / 2], 1)
    # B-X bond length sets a_pc; octahedral tilting (t < 1) shrinks it, A-site strain (t > 1) expands it
    a = 2 * (rB + rX) * torch.where(t > 1, t ** 0.5, 1 - 0.05 * (1 - t))
    a = a + 0.01 * torch.randn(n, generator=g)
    return x, a


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [2, 2, 3][seed % 3]
    width = [64, 96, 48][seed % 3]
    lr = [0.1, 0.12, 0.08][seed % 3]
    if fixed:
        lr = lr / 10
    bs = [48, 32, 64][seed % 3]
    steps = 200
    torch.manual_seed(seed)
    model = PerovskiteMLP(10, width, depth)
    x, a = _radii(g, 4000)
    y = (a - a.mean()) / a.std()
    batches = []
    for s in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        batches.append((x[idx], y[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
