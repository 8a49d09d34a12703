"""Deep energy estimator network (DEEN) trained with RMSprop at a far too high lr.

Mechanism: an energy-based model E_theta(x) (softplus MLP, scalar output) is trained by
denoising score matching: the module's forward computes the score s(x~) = -dE/dx~ with
``torch.autograd.grad(create_graph=True)`` and the loss is
sigma^2 * || s(x~) - (x - x~)/sigma^2 ||^2 (Saremi et al. 2018), i.e. a double-backprop
objective whose gradient scales with the curvature of the energy.  The user trains it with
RMSprop at lr 0.05 (a value from a classifier recipe).  RMSprop's normalised steps
make every update ~lr in size, update/weight ratios are ~1e-1: the energy surface is
over-sharpened on the first few steps, the score magnitudes (second derivatives through
the softplus layers) overshoot, the next steps overcorrect, and the DSM loss ends up far
above its starting value (or overflows).

ORIGIN is None: the lr is wrong for every parameter; no single module starts it.

Fix: RMSprop at lr 1e-3.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Saremi, Mehrjou, Schoelkopf & Hyvarinen 2018 'Deep Energy Estimator Networks'; "
          "Vincent 2011 denoising score matching; EBM trained with a classifier-recipe lr")


class EnergyMLP(nn.Module):
    def __init__(self, d, hidden, depth):
        super().__init__()
        layers, d_in = [], d
        for _ in range(depth):
            layers += [nn.Linear(d_in, hidden), nn.Softplus()]
            d_in = hidden
        layers.append(nn.Linear(d_in, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


class DEEN(nn.Module):
    def __init__(self, d, hidden, depth):
        super().__init__()
        self.energy = EnergyMLP(d, hidden, depth)

    def forward(self, x_noisy):
        x_noisy = x_noisy.requires_grad_(True)
        e = self.energy(x_noisy).sum()
        (grad_x,) = torch.autograd.grad(e, x_noisy, create_graph=True)
        return -grad_x  # score


def sample_data(n, d, centers, sigma, g):
    idx = torch.randint(0, centers.shape[0], (n,), generator=g)
    x = centers[idx] + 0.3 * torch.randn(n, d, generator=g)
    x_noisy = x + sigma * torch.randn(n, d, generator=g)
    return x_noisy, (x - x_noisy) / sigma ** 2


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=4, hidden=64, depth=3, sigma=0.5, bs=128, lr=0.05, steps=150),
           dict(d=8, hidden=96, depth=3, sigma=0.4, bs=96, lr=0.05, steps=130),
           dict(d=2, hidden=48, depth=4, sigma=0.6, bs=128, lr=0.05, steps=160)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(808 + seed)
    centers = 1.5 * torch.randn(6, cfg["d"], generator=g)
    sigma = cfg["sigma"]
    model = DEEN(cfg["d"], cfg["hidden"], cfg["depth"])
    batches = [sample_data(cfg["bs"], cfg["d"], centers, sigma, g) for _ in range(cfg["steps"])]

    def dsm_loss(score, target):
        return sigma ** 2 * ((score - target) ** 2).sum(-1).mean()

    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3 if fixed else cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=dsm_loss, batches=batches,
                steps=cfg["steps"])
