"""Hamiltonian neural network (Greydanus et al. 2019) for an ideal pendulum. The network outputs a
scalar H(q, p); forward differentiates it w.r.t. its input with torch.autograd.grad(create_graph=True)
and returns the symplectic gradient (dH/dp, -dH/dq), which is regressed on the observed (dq/dt, dp/dt).
With Adam at lr=0.3 the first updates move every weight by ~0.3: the loss jumps 10-100x, the tanh hidden
units are thrown into saturation (dH/dx ~ 0 except on thin bands) and the loss never gets below the
'predict zero' level of step 0 for the rest of the run, while lr=1e-3 reaches ~1e-3 of it.
fixed=True: the reference learning rate 1e-3 (nothing else changes).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("greydanus/hamiltonian-nn (HNN: MLP with tanh, Adam, time derivative from "
          "torch.autograd.grad(create_graph=True)); the usual 'raised Adam lr for speed, loss flat at the "
          "zero-prediction level' report")


class HNN(nn.Module):
    def __init__(self, hidden=200):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 1, bias=False))
        for mod in self.net:
            if isinstance(mod, nn.Linear):
                nn.init.orthogonal_(mod.weight)

    def forward(self, x):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            H = self.net(x)
            dH = torch.autograd.grad(H.sum(), x, create_graph=True)[0]
        return torch.stack([dH[:, 1], -dH[:, 0]], dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = HNN()
    steps, n = 250, 128
    batches = []
    for _ in range(steps):
        # phase-space samples of pendulum trajectories (energy levels between 0.3 and 1.5), noisy derivatives
        energy = 0.3 + 1.2 * torch.rand(n, generator=g)
        theta = 2 * math.pi * torch.rand(n, generator=g)
        r = torch.sqrt(2 * energy)
        q, p = r * torch.cos(theta) * 0.9, r * torch.sin(theta)
        dq, dp = p, -3.0 * torch.sin(q)
        y = torch.stack([dq, dp], 1) + 0.05 * torch.randn(n, 2, generator=g)
        batches.append((torch.stack([q, p], 1), y))
    lr = 1e-3 if fixed else 0.3
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
