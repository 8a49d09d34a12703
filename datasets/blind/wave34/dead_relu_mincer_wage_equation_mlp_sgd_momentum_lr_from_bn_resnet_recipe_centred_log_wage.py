"""Flexible Mincer wage equation: centred log hourly wage from standardised schooling, potential
experience, tenure, hours and region/industry indicators (CPS-style microdata) through a plain
ReLU MLP (no normalisation layers), MSE, SGD with momentum 0.9.

Mechanism (dead_relu). The optimiser settings (lr 0.3-0.4, momentum 0.9) were copied from a
BatchNorm ResNet recipe, where normalisation keeps pre-activations centred whatever the step
size. Without BatchNorm, the first few heavy-ball steps overshoot: the loss jumps, the
back-propagated errors become large and same-signed, and momentum keeps pushing the hidden
biases and weights of many units in the same direction for several steps. Their
pre-activations end up negative for every worker in the data; dead units have exactly zero
gradient and never come back, the surviving units are too few (often none in a layer) to carry
the signal, and the fit collapses to (about) the mean wage: the loss stays at or above its
starting level.

ORIGIN = "top_act": the first ReLU; once its units are off for all inputs the deeper layers
receive a constant and die with it.

Fix: a learning rate suited to a normalisation-free MLP (0.03, same momentum). Same model,
data, batches and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "top_act"
SOURCE = ("Dying ReLU after large early SGD-momentum steps with a learning rate taken from a "
          "BatchNorm recipe (Goyal et al. 2017 lr 0.1*k; Lu et al. 2019 'Dying ReLU and initialization'; "
          "Mincer (1974) earnings function estimated with neural nets in labour economics")


class WageMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth - 1):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.mlp = nn.Sequential(*layers)
        self.top = nn.Linear(d, width)
        self.top_act = nn.ReLU()
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        return self.out(self.top_act(self.top(self.mlp(x)))).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [32, 24, 20][seed % 3]
    depth = [3, 4, 3][seed % 3]
    lr = [0.3, 0.35, 0.3][seed % 3]
    bs = [128, 256, 192][seed % 3]
    steps = 150
    D = 10

    model = WageMLP(D, width, depth)

    def sample(n):
        x = torch.randn(n, D, generator=g)
        school, exper, tenure = x[:, 0], x[:, 1], x[:, 2]
        y = 0.45 * school + 0.5 * exper - 0.25 * exper ** 2 + 0.15 * tenure \
            + 0.2 * x[:, 3:].sum(1) / 3 + 0.3 * torch.relu(school - 0.5) \
            + 0.35 * torch.randn(n, generator=g)
        return x, y                                  # centred log hourly wage

    batches = [sample(bs) for _ in range(steps)]
    if fixed:
        lr = 0.03
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps)
