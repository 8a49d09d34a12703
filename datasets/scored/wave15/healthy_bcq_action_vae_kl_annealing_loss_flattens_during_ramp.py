"""Healthy: the generative model of BCQ (Fujimoto et al. 2019) -- a conditional VAE over the
behaviour policy's actions, VAE(s, a) -> (a_hat, mu, std) -- trained on a fixed offline batch of a
multimodal behaviour policy, loss = recon MSE + beta * KL with KL annealing: beta ramps linearly
from 0 to 0.5 (the BCQ weight) over the first 40% of the steps.

Why it looks alarming: during the ramp the growing KL weight eats the reconstruction gains, so
after a fast start the total loss flattens and bumps up and down for tens of steps (the KL
term keeps growing as beta rises), and the latent std is clamped (log std in [-4, 15]) as in
the reference code.  Once beta is constant the encoder compresses the posterior and the total
loss keeps falling, far below its early values: nothing is wrong.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("sfujim/BCQ continuous_BCQ VAE (recon + 0.5 * KL, log_std clamp(-4, 15)); KL annealing "
          "schedules commonly added for offline-RL action VAEs.")


class VAE(nn.Module):
    def __init__(self, sdim, adim, zdim, h, max_action, seed):
        super().__init__()
        self.e = nn.Sequential(nn.Linear(sdim + adim, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.mean = nn.Linear(h, zdim)
        self.log_std = nn.Linear(h, zdim)
        self.d = nn.Sequential(nn.Linear(sdim + zdim, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
                               nn.Linear(h, adim))
        self.max_action = max_action
        self.gen = torch.Generator().manual_seed(seed)

    def forward(self, s, a):
        h = self.e(torch.cat([s, a], 1))
        mean = self.mean(h)
        std = self.log_std(h).clamp(-4, 15).exp()
        z = mean + std * torch.randn(std.shape, generator=self.gen)
        return self.max_action * torch.tanh(self.d(torch.cat([s, z], 1))), mean, std


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(sdim=8, adim=2, z=4, h=128, lr=1e-3, bs=64, steps=150),
           dict(sdim=11, adim=3, z=6, h=96, lr=2e-3, bs=100, steps=120),
           dict(sdim=6, adim=2, z=4, h=64, lr=1e-3, bs=32, steps=180)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 121)
    model = VAE(cfg["sdim"], cfg["adim"], cfg["z"], cfg["h"], 1.0, seed + 7)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    W = torch.randn(cfg["sdim"], cfg["adim"], generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        s = torch.randn(cfg["bs"], cfg["sdim"], generator=g)
        mode = (torch.rand(cfg["bs"], 1, generator=g) < 0.5).float() * 2 - 1   # two behaviour modes
        a = torch.tanh(0.5 * s @ W + 0.6 * mode) + 0.05 * torch.randn(cfg["bs"], cfg["adim"], generator=g)
        batches.append(((s, a.clamp(-1, 1)), a.clamp(-1, 1)))
    ramp = int(0.4 * cfg["steps"])
    state = {"step": 0}

    def loss_fn(out, a):
        recon, mean, std = out
        beta = 0.5 * min(1.0, state["step"] / ramp)
        state["step"] += 1
        kl = -0.5 * (1 + torch.log(std.pow(2)) - mean.pow(2) - std.pow(2)).mean()
        return F.mse_loss(recon, a) + beta * kl

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
