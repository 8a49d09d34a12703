"""Approximate (explicit) MPC: a deep MLP imitating the constrained optimal control law of
a cart-pole balanced around the upright, ported from a MATLAB `feedforwardnet` design.

Mechanism: the control engineer ported a MATLAB network whose hidden layers all use the
`logsig` transfer function (logistic sigmoid) and kept the depth they had used with
`tansig` (6-8 hidden layers), trained with SGD + momentum on standardised states and
standardised MPC controls.  Logistic units have slope <= 0.25 and are not zero-centred:
with the default init each layer shrinks the sample-to-sample variation of its input by
~8x while passing on a common offset of ~0.5, so from the third layer up every unit sees
an almost constant input, the backpropagated signal shrinks by the same factor per layer
(first-layer gradient ~1e-6), and SGD then drives the top sigmoid layer into saturation
(mean activation 0.05-0.2, Glorot & Bengio 2010 report exactly this top-layer
saturation).  The network outputs an input-independent control; the MSE sits at the
variance of the standardised targets.

ORIGIN is net.1, the first Sigmoid: the saturation/vanishing chain through the logistic
layers starts at the first of them (every hidden activation is a Sigmoid).

Fix: zero-centred tanh ("tansig") hidden activations, everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Explicit/approximate MPC by neural networks (Parisini & Zoppoli 1995; Karg & Lucia "
          "2020); Glorot & Bengio 2010 on top-layer sigmoid saturation in deep logistic MLPs")


class MPCPolicy(nn.Module):
    def __init__(self, width, depth, act):
        super().__init__()
        layers = [nn.Linear(4, width), act()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), act()]
        layers += [nn.Linear(width, 1)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def mpc_targets(x, K, u_max):
    """Box-constrained control law of the linearised cart-pole: the saturated LQR law with
    an extra horizon-dependent correction, standing in for the MPC solver's first move."""
    u = -(x @ K.t())
    u = u - 0.15 * torch.tanh(2 * x[:, 1:2]) * x[:, 3:4] ** 2
    return u.clamp(-u_max, u_max)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(width=64, depth=7, lr=0.1, bs=128, steps=150),
        dict(width=48, depth=8, lr=0.05, bs=96, steps=140),
        dict(width=96, depth=6, lr=0.1, bs=160, steps=160),
    ][seed % 3]
    act = nn.Tanh if fixed else nn.Sigmoid
    model = MPCPolicy(cfg["width"], cfg["depth"], act)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    K = torch.tensor([[-1.0, 25.0, -2.0, 5.0]])   # [cart pos, pole angle, cart vel, pole rate]
    scale = torch.tensor([1.0, 0.3, 1.5, 1.0])
    u_max = 10.0
    raw = []
    for _ in range(cfg["steps"]):
        x = torch.randn(cfg["bs"], 4, generator=g) * scale
        raw.append((x, mpc_targets(x, K, u_max)))
    u_all = torch.cat([u for _, u in raw])
    mu, sd = u_all.mean(), u_all.std()
    batches = [(x / scale, (u - mu) / sd) for x, u in raw]

    def loss_fn(out, target):
        return F.mse_loss(out, target)

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
