"""WGAN-GP (Gulrajani et al. 2017) on 8-Gaussians; generator and critic in one nn.Module, one Adam
with TTUR parameter groups (critic 1e-3, generator 1e-4). Fakes reach the critic through a
gradient-reversal layer, so one backward of D(fake) - D(real) + 10*GP (penalty via
torch.autograd.grad, create_graph=True) trains both players. The loss starts near 10 (penalty),
turns negative and oscillates around 0 as the players chase each other: normal adversarial
dynamics, no failure. fixed=True builds the identical run."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("igul222/improved_wgan_training gan_toy.py (8gaussians, ReLU MLPs, LAMBDA=10, Adam 1e-4 "
          "betas (0.5, 0.9)); gradient-reversal trick of Ganin & Lempitsky 2015 to train both "
          "players with one optimizer step")


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return -g


def mlp(d_in, d_out, width=128):
    return nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                         nn.Linear(width, width), nn.ReLU(), nn.Linear(width, d_out))


class WGANGP(nn.Module):
    def __init__(self, z_dim=2):
        super().__init__()
        self.generator = mlp(z_dim, 2)
        self.critic = mlp(2, 1)

    def forward(self, real, z, alpha):
        fake = self.generator(z)
        d_real = self.critic(real)
        d_fake = self.critic(GradReverse.apply(fake))
        # gradient penalty on random interpolates (generator output detached, as in the reference)
        x_hat = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
        d_hat = self.critic(x_hat)
        grad = torch.autograd.grad(d_hat.sum(), x_hat, create_graph=True)[0]
        gp = ((grad.norm(2, dim=1) - 1) ** 2).mean()
        return d_real, d_fake, gp


def eight_gaussians(n, g):
    k = torch.randint(0, 8, (n,), generator=g).float()
    ang = 2 * math.pi * k / 8
    centers = torch.stack([torch.cos(ang), torch.sin(ang)], 1) * 2.0
    return (centers + 0.02 * torch.randn(n, 2, generator=g)) / 1.414


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 300, 256
    batches = []
    for _ in range(steps):
        real = eight_gaussians(bs, g)
        z = torch.randn(bs, 2, generator=g)
        alpha = torch.rand(bs, 1, generator=g)
        batches.append(((real, z, alpha), torch.zeros(bs)))
    model = WGANGP()
    # two time-scale update rule (Heusel et al. 2017) in one optimizer: critic faster than generator
    opt = torch.optim.Adam([{"params": model.critic.parameters(), "lr": 1e-3},
                            {"params": model.generator.parameters(), "lr": 1e-4}], betas=(0.5, 0.9))
    lam = 10.0

    def loss_fn(out, _unused):
        d_real, d_fake, gp = out
        return d_fake.mean() - d_real.mean() + lam * gp

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
