"""Deep Ritz method (E & Yu 2018) for the Poisson problem on a square, ported from TF1.

Mechanism: the Deep Ritz network is a stack of residual blocks
s <- phi(W2 phi(W1 s + b1) + b2) + s with the paper's activation phi(x) = max(x, 0)^3,
trained by minimising the Ritz energy mean(1/2 |grad u|^2 - f u) * |Omega| plus a
boundary penalty.  The TF1 code created every weight as tf.Variable(tf.random_normal(...))
whose default stddev is 1.0, and the port kept it (nn.init.normal_(w) with std 1).  With
unit-variance weights a pre-activation is ~sqrt(width) times its input and the cubic
activation raises that to the third power, so the activation scale is multiplied by a
huge factor in every block: the second or third block already overflows float32 and the
energy (and its autograd gradient) is inf/NaN at the very first step.

ORIGIN is blocks.0.fc1, the first badly initialised layer: the geometric blow-up starts
there and compounds through every following block.

Fix: Xavier-normal initialisation of the block weights (zero biases), as the paper's
implementation does; activation, energy, optimiser and data unchanged.
"""
import math

import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "blocks.0.fc1"
SOURCE = ("E & Yu, 'The Deep Ritz Method' (2018): ResNet blocks with max(x^3, 0) activation; "
          "TF1 tf.random_normal default stddev=1.0 carried into a PyTorch port")


class ReLU3(nn.Module):
    def forward(self, x):
        return torch.relu(x) ** 3


class RitzBlock(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.fc1 = nn.Linear(m, m)
        self.act1 = ReLU3()
        self.fc2 = nn.Linear(m, m)
        self.act2 = ReLU3()

    def forward(self, s):
        return self.act2(self.fc2(self.act1(self.fc1(s)))) + s


class DeepRitz(nn.Module):
    def __init__(self, m, n_blocks, tf1_init):
        super().__init__()
        self.m = m
        self.blocks = nn.ModuleList([RitzBlock(m) for _ in range(n_blocks)])
        self.out = nn.Linear(m, 1)
        for mod in self.modules():
            if isinstance(mod, nn.Linear):
                if tf1_init:
                    nn.init.normal_(mod.weight, std=1.0)
                    nn.init.normal_(mod.bias, std=1.0)
                else:
                    nn.init.xavier_normal_(mod.weight)
                    nn.init.zeros_(mod.bias)

    def u(self, x):
        s = torch.cat([x, torch.zeros(x.shape[0], self.m - 2)], 1)  # pad input to width m
        for b in self.blocks:
            s = b(s)
        return self.out(s)

    def forward(self, x_int, x_bdry):
        x_int = x_int.clone().requires_grad_(True)
        u = self.u(x_int)
        grad_u = torch.autograd.grad(u.sum(), x_int, create_graph=True)[0]
        f = 2 * math.pi ** 2 * torch.sin(math.pi * x_int[:, :1]) * torch.sin(math.pi * x_int[:, 1:])
        energy_density = 0.5 * (grad_u ** 2).sum(1, keepdim=True) - f * u
        return energy_density, self.u(x_bdry)


def boundary_points(n, g):
    t = torch.rand(n, generator=g) * 2 - 1
    side = torch.randint(0, 4, (n,), generator=g)
    x = torch.stack([t, torch.ones(n)], 1)
    x[side == 1] = torch.stack([t, -torch.ones(n)], 1)[side == 1]
    x[side == 2] = torch.stack([torch.ones(n), t], 1)[side == 2]
    x[side == 3] = torch.stack([-torch.ones(n), t], 1)[side == 3]
    return x


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(m=10, blocks=4, lr=1e-3, n_int=512, n_b=128, steps=120),
        dict(m=16, blocks=3, lr=2e-3, n_int=384, n_b=96, steps=100),
        dict(m=12, blocks=2, lr=1e-3, n_int=640, n_b=160, steps=140),
    ][seed % 3]
    model = DeepRitz(cfg["m"], cfg["blocks"], tf1_init=not fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    beta = 500.0
    batches = []
    for _ in range(cfg["steps"]):
        x_int = torch.rand(cfg["n_int"], 2, generator=g) * 2 - 1
        x_b = boundary_points(cfg["n_b"], g)
        batches.append(((x_int, x_b), None))

    def loss_fn(out, _):
        energy_density, u_b = out
        return 4.0 * energy_density.mean() + beta * (u_b ** 2).mean()

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
