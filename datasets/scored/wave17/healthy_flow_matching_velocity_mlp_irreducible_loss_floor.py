"""Healthy: conditional flow matching / rectified flow on a 2-d ring of 8 Gaussians (radius 4).
A ReLU MLP v(x_t, t) regresses x1 - x0 with x_t = (1 - t) x0 + t x1, MSE, SGD + momentum.

Looks alarming: the loss starts ~7-9, drops quickly and then sits on a high, noisy floor (~4)
for most of the run, with batch-to-batch jumps of +-0.5. That floor is the irreducible
conditional variance of the flow-matching target (x1 - x0 is not a function of (x_t, t)), not a
stall: the learned velocity field is fine. Nothing to fix.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Lipman et al. flow matching / Liu et al. rectified flow toy examples; loss plateaus well above zero by construction"


class VelocityMLP(nn.Module):
    def __init__(self, hidden, depth):
        super().__init__()
        layers = [nn.Linear(3, hidden), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(hidden, hidden), nn.ReLU()]
        layers += [nn.Linear(hidden, 2)]
        self.net = nn.Sequential(*layers)

    def forward(self, xt, t):
        return self.net(torch.cat([xt, t], 1))


def _batch(g, n):
    k = torch.randint(0, 8, (n,), generator=g).float() * (2 * math.pi / 8)
    x1 = 4 * torch.stack([torch.cos(k), torch.sin(k)], 1) + 0.3 * torch.randn(n, 2, generator=g)
    x0 = torch.randn(n, 2, generator=g)
    t = torch.rand(n, 1, generator=g)
    return (((1 - t) * x0 + t * x1, t), x1 - x0)


def build(seed, fixed=False):
    cfg = [dict(h=64, depth=3, lr=0.01, bs=128), dict(h=128, depth=2, lr=0.008, bs=64), dict(h=48, depth=4, lr=0.01, bs=256)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = VelocityMLP(cfg["h"], cfg["depth"])
    steps = 200
    batches = [_batch(g, cfg["bs"]) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
