"""Lagrangian neural network (Cranmer et al. 2020) learning a coupled Duffing oscillator.

Mechanism: the network models the Lagrangian L(q, qd) with a softplus MLP; accelerations
come from the Euler-Lagrange equation, qdd = (d2L/dqd2)^-1 (dL/dq - d2L/dqd dq qd),
i.e. from second derivatives of the MLP and a 2x2 linear solve.  The user wanted a
"sharper, ReLU-like" Lagrangian and set nn.Softplus(beta=15..30).  The curvature of
softplus_beta is beta * sigmoid'(beta z): with beta z of several units for most units
(about two thirds at init) the sigmoid is saturated and each unit contributes a narrow
spike of curvature only in a thin band of inputs.  The Hessian d2L/dqd2 is then a sum of
a few spikes, nearly singular on a large fraction of samples, and its inverse throws
accelerations of 10^2-10^5; the loss jumps between 10^2 and 10^5 and never comes down
(it ends far above its early minimum) while the fixed run learns steadily.

ORIGIN is lag.1, the first Softplus: its saturated sigmoid (curvature) is where the
vanishing second derivatives and exploding inverse start.

Fix: the default nn.Softplus(beta=1) (smaller pre-activations inside the sigmoid of its
curvature); width, depth, lr, data unchanged.
"""
import math

import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "lag.1"
SOURCE = ("Cranmer et al., Lagrangian Neural Networks (2020) (softplus MLP, Hessian-inverse "
          "Euler-Lagrange accelerations); users replacing softplus by a sharp beta to mimic ReLU")


class LNN(nn.Module):
    def __init__(self, width, depth, beta):
        super().__init__()
        layers = [nn.Linear(4, width), nn.Softplus(beta=beta)]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Softplus(beta=beta)]
        layers += [nn.Linear(width, 1)]
        self.lag = nn.Sequential(*layers)

    def forward(self, state):
        state = state.clone().requires_grad_(True)
        L = self.lag(state).sum()
        g = torch.autograd.grad(L, state, create_graph=True)[0]        # B,4
        dL_dq, dL_dqd = g[:, :2], g[:, 2:]
        rows = [torch.autograd.grad(dL_dqd[:, i].sum(), state, create_graph=True)[0]
                for i in range(2)]
        Hfull = torch.stack(rows, 1)                                   # B,2,4
        H_qdqd = Hfull[:, :, 2:]                                       # d2L/dqd dqd
        H_qdq = Hfull[:, :, :2]                                        # d2L/dqd dq
        qd = state[:, 2:]
        rhs = dL_dq - (H_qdq @ qd.unsqueeze(-1)).squeeze(-1)
        return torch.linalg.solve(H_qdqd, rhs.unsqueeze(-1)).squeeze(-1)


def coupled_oscillator_acc(s):
    """Two unit masses, walls-spring-mass-spring-mass-spring-walls chain with a quartic
    (Duffing) hardening term on each wall spring:
    L = 1/2 (qd1^2 + qd2^2) - V(q),  V = 1/2 k q1^2 + 1/2 k q2^2 + 1/2 c (q1 - q2)^2
                                        + 1/4 h (q1^4 + q2^4)."""
    k, c, h = 1.0, 0.5, 0.3
    q1, q2 = s[:, 0], s[:, 1]
    a1 = -k * q1 - c * (q1 - q2) - h * q1 ** 3
    a2 = -k * q2 - c * (q2 - q1) - h * q2 ** 3
    return torch.stack([a1, a2], -1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(width=96, depth=3, beta=20.0, bs=128, steps=100, lr=5e-4),
        dict(width=64, depth=2, beta=30.0, bs=128, steps=100, lr=1e-3),
        dict(width=48, depth=3, beta=15.0, bs=128, steps=100, lr=1e-3),
    ][seed % 3]
    beta = 1.0 if fixed else cfg["beta"]
    model = LNN(cfg["width"], cfg["depth"], beta)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for _ in range(cfg["steps"]):
        s = torch.cat([(torch.rand(cfg["bs"], 2, generator=g) * 2 - 1) * 1.5,
                       torch.randn(cfg["bs"], 2, generator=g) * 1.0], 1)
        batches.append((s, coupled_oscillator_acc(s)))

    def loss_fn(out, target):
        return ((out - target) ** 2).mean()

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
